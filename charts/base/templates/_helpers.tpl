{{/* Labels every object of this chart carries. */}}
{{- define "base.labels" -}}
app.kubernetes.io/name: istiod-ts
app.kubernetes.io/part-of: istio
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/instance: {{ .Release.Name }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end }}

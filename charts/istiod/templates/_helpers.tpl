{{/*
The chart's values with the legacy `pilot.` block merged over the top level, as Istio's chart
does, so templates read one set of keys. Returned as YAML; templates use it through fromYaml.
*/}}
{{- define "istiod.values" -}}
{{- $v := deepCopy .Values -}}
{{- $pilot := deepCopy (.Values.pilot | default dict) -}}
{{- $_ := unset $v "pilot" -}}
{{- toYaml (mergeOverwrite $v $pilot) -}}
{{- end -}}

{{/* "-<revision>" when a revision is set, else "". */}}
{{- define "istiod.revSuffix" -}}
{{- $rev := (include "istiod.values" . | fromYaml).revision | default "" -}}
{{- if $rev }}-{{ $rev }}{{ end -}}
{{- end -}}

{{/* The revision label value: the revision, or "default". */}}
{{- define "istiod.revLabel" -}}
{{- (include "istiod.values" . | fromYaml).revision | default "default" -}}
{{- end -}}

{{/* Name of the Deployment, Service, ServiceAccount and Role: istiod[-<revision>]. */}}
{{- define "istiod.name" -}}
istiod{{ include "istiod.revSuffix" . }}
{{- end -}}

{{/* Labels on every object. */}}
{{- define "istiod.labels" -}}
app: istiod
istio.io/rev: {{ include "istiod.revLabel" . | quote }}
app.kubernetes.io/name: istiod-ts
app.kubernetes.io/part-of: istio
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{/*
Pod selector. The default revision selects on istio=pilot so a revisioned canary in the same
namespace is not picked up by the default Service.
*/}}
{{- define "istiod.selector" -}}
app: istiod
{{- if eq (include "istiod.revSuffix" .) "" }}
istio: pilot
{{- else }}
istio.io/rev: {{ include "istiod.revLabel" . | quote }}
{{- end }}
{{- end -}}

{{/* The container image. */}}
{{- define "istiod.image" -}}
{{- $v := include "istiod.values" . | fromYaml -}}
{{- if contains "/" $v.image -}}
{{ $v.image }}
{{- else -}}
{{ $v.hub | default $v.global.hub }}/{{ $v.image }}:{{ $v.tag | default $v.global.tag | default .Chart.AppVersion }}
{{- end -}}
{{- end -}}

{{/* Whether a PodDisruptionBudget is useful: more than one replica at all times. */}}
{{- define "istiod.pdbEnabled" -}}
{{- $v := include "istiod.values" . | fromYaml -}}
{{- if or (and $v.autoscaleEnabled (gt (int $v.autoscaleMin) 1)) (and (not $v.autoscaleEnabled) (gt (int $v.replicaCount) 1)) -}}
true
{{- end -}}
{{- end -}}

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
The Service's and PodDisruptionBudget's pod selector, as Istio's chart writes them. The default
revision selects on istio=pilot so a revisioned canary in the same namespace is not picked up by
the default Service.
*/}}
{{- define "istiod.selector" -}}
app: istiod
{{- if eq (include "istiod.revSuffix" .) "" }}
istio: pilot
{{- else }}
istio.io/rev: {{ include "istiod.revLabel" . | quote }}
{{- end }}
{{- end -}}

{{/*
The Deployment's selector: Istio's chart's, field for field. A Deployment's selector cannot
change, so any other selector makes `helm upgrade` over an installed istiod release fail
(test/integration/charts/istiod-upgrade-in-place.test.ts).
*/}}
{{- define "istiod.deploymentSelector" -}}
{{- if eq (include "istiod.revSuffix" .) "" -}}
istio: pilot
{{- else -}}
app: istiod
istio.io/rev: {{ include "istiod.revLabel" . | quote }}
{{- end -}}
{{- end -}}

{{/*
The image's hub and tag: this chart's own `hub` and `tag` (or `pilot.`), never global.hub and
global.tag. A values file shared with Istio's ztunnel and istio-cni charts sets those to Istio's
registry, which has no istiod-ts image; NOTES.txt says so when they are set.
*/}}
{{- define "istiod.hub" -}}
{{- (include "istiod.values" . | fromYaml).hub | default "istiod-ts" -}}
{{- end -}}

{{- define "istiod.tag" -}}
{{- (include "istiod.values" . | fromYaml).tag | default .Chart.AppVersion -}}
{{- end -}}

{{/* The container image: <hub>/<image>:<tag>, or `image` as it is when it holds a "/". */}}
{{- define "istiod.image" -}}
{{- $v := include "istiod.values" . | fromYaml -}}
{{- if contains "/" $v.image -}}
{{ $v.image }}
{{- else -}}
{{ include "istiod.hub" . }}/{{ $v.image }}:{{ include "istiod.tag" . }}
{{- end -}}
{{- end -}}

{{/*
Whether a PodDisruptionBudget is wanted (global.defaultPodDisruptionBudget.enabled, as Istio's
chart) and useful: more than one replica at all times.
*/}}
{{- define "istiod.pdbEnabled" -}}
{{- $v := include "istiod.values" . | fromYaml -}}
{{- if (($v.global).defaultPodDisruptionBudget).enabled -}}
{{- if or (and $v.autoscaleEnabled (gt (int $v.autoscaleMin) 1)) (and (not $v.autoscaleEnabled) (gt (int $v.replicaCount) 1)) -}}
true
{{- end -}}
{{- end -}}
{{- end -}}

{{/* The Service spec shared by istiod[-<rev>] and each revision tag's Service. */}}
{{- define "istiod.serviceSpec" -}}
{{- $v := include "istiod.values" . | fromYaml -}}
# ztunnel dials istiod[-<revision>].<namespace>.svc:15012 for certificates and workloads.
ports:
  - name: grpc-xds
    port: 15010
    protocol: TCP
  - name: https-dns
    port: 15012
    protocol: TCP
  - name: https-webhook
    port: 443
    targetPort: 15017
    protocol: TCP
  - name: http-monitoring
    port: 15014
    protocol: TCP
selector:
  {{- include "istiod.selector" . | nindent 2 }}
{{- with $v.ipFamilyPolicy }}
ipFamilyPolicy: {{ . }}
{{- end }}
{{- with $v.ipFamilies }}
ipFamilies: {{ toJson . }}
{{- end }}
{{- with $v.trafficDistribution }}
trafficDistribution: {{ . }}
{{- end }}
{{- end -}}

{{/*
Whether objects of a scope ("cluster" or "namespace") are rendered: global.resourceScope all
renders both, as Istio's chart, so cluster-wide objects can be applied by another team.
*/}}
{{- define "istiod.inScope" -}}
{{- $scope := (include "istiod.values" .ctx | fromYaml).global.resourceScope | default "all" -}}
{{- if and (or (eq $scope "all") (eq $scope .scope)) (or .remote (not (include "istiod.remote" .ctx))) -}}
true
{{- end -}}
{{- end -}}

{{/*
The remote profile (profile=remote, or istiodRemote.enabled, Istio's two spellings of it): this
cluster is served by a primary's istiod-ts elsewhere, so nothing of istiod is rendered here. Every
template asks istiod.inScope, which is false under this profile unless the template passes
"remote" true: only the reader's RBAC (reader-clusterrole.yaml, remote-root-publisher-rbac.yaml)
and the Service that leads to the primary (remote-istiod-service.yaml) do.
*/}}
{{- define "istiod.remote" -}}
{{- $v := include "istiod.values" . | fromYaml -}}
{{- if or (eq ($v.profile | default "") "remote") (eq ($v.global.profile | default "") "remote") ($v.istiodRemote).enabled -}}
true
{{- end -}}
{{- end -}}

{{/*
Names of the objects istiod-ts writes, for the RBAC rules' resourceNames. Each follows the
variable the server reads it from (src/config/options.ts), so `env` overrides reach them too.
*/}}
{{- define "istiod.rootCertConfigMap" -}}
{{- $v := include "istiod.values" . | fromYaml -}}
{{- ($v.env | default dict).PILOT_CA_CERT_CONFIGMAP | default $v.global.trustBundleName | default "istio-ca-root-cert" -}}
{{- end -}}

{{- define "istiod.crlConfigMap" -}}
{{- $v := include "istiod.values" . | fromYaml -}}
{{- ($v.env | default dict).PILOT_CRL_CONFIGMAP | default $v.crlConfigMapName | default "istio-ca-crl" -}}
{{- end -}}

{{/* The validator this release renders (validatingwebhookconfiguration.yaml). */}}
{{- define "istiod.validatorName" -}}
{{- $v := include "istiod.values" . | fromYaml -}}
istio-validator{{ include "istiod.revSuffix" . }}-{{ $v.global.istioNamespace }}
{{- end -}}

{{/* The chart's own volume names; a `volumes` entry must not reuse one. */}}
{{- define "istiod.chartVolumes" -}}
{{ list "istio-token" "cacerts" "istio-csr-dns-cert" "istio-csr-ca-configmap" "tmp" | toJson }}
{{- end -}}

{{/*
Values istiod-ts cannot honour fail the render with the reason, instead of being ignored. The
schema has already checked types; these are the combinations and values it cannot express.
*/}}
{{- define "istiod.checks" -}}
{{- $v := include "istiod.values" . | fromYaml -}}
{{- if hasKey (.Values.pilot | default dict) "pilot" -}}
{{- fail "pilot.pilot: the pilot. prefix applies once; give the key under pilot. or at the top level" -}}
{{- end -}}
{{- $provider := $v.global.pilotCertProvider | default "istiod" -}}
{{- if not (has $provider (list "istiod" "custom")) -}}
{{- fail (printf "global.pilotCertProvider=%s is not supported by istiod-ts (the Kubernetes CSR API signers it would use no longer sign serving certificates): use istiod (the mesh CA issues istiod's certificate) or custom (a certificate in Secret istiod-tls, mounted at /var/run/secrets/istiod/tls)" $provider) -}}
{{- end -}}
{{- if and (include "istiod.remote" .) ($v.istiodRemote).enabledLocalInjectorIstiod -}}
{{- fail "istiodRemote.enabledLocalInjectorIstiod: istiod-ts injects no sidecars, so a remote cluster has no local istiod; leave it unset" -}}
{{- end -}}
{{- if and (include "istiod.remote" .) $v.global.configCluster -}}
{{- fail "global.configCluster: istiod-ts reads Istio configuration from the cluster it runs in (the primary), never from a remote; leave it unset" -}}
{{- end -}}
{{- range $key, $profile := dict "profile" ($v.profile | default "") "global.profile" ($v.global.profile | default "") -}}
{{- if not (has $profile (list "" "ambient" "remote")) -}}
{{- fail (printf "%s=%s: istiod-ts is an ambient control plane and its defaults are Istio's ambient profile; use %s=ambient (or remote, for a cluster a primary serves) or leave it unset" $key $profile $key) -}}
{{- end -}}
{{- end -}}
{{- if eq (toString (($v.env | default dict).ENABLE_CLUSTER_TRUST_BUNDLE_API)) "true" -}}
{{- fail "env.ENABLE_CLUSTER_TRUST_BUNDLE_API: istiod-ts publishes the root certificate in ConfigMaps only, not in ClusterTrustBundles; leave it unset here and in the ztunnel chart" -}}
{{- end -}}
{{- $fromNames := list -}}
{{- range $v.envVarFrom -}}
{{- if hasKey ($v.env | default dict) .name -}}
{{- fail (printf "envVarFrom: %s is also set in env; give each variable once" .name) -}}
{{- end -}}
{{- $fromNames = append $fromNames .name -}}
{{- end -}}
{{- if ne (len $fromNames) (len (uniq $fromNames)) -}}
{{- fail (printf "envVarFrom: a variable appears twice in %s" (toJson $fromNames)) -}}
{{- end -}}
{{- $volumeNames := include "istiod.chartVolumes" . | fromJsonArray -}}
{{- range $v.volumes -}}
{{- if has .name $volumeNames -}}
{{- fail (printf "volumes: %s is already a volume of the chart (or given twice); choose another name" .name) -}}
{{- end -}}
{{- $volumeNames = append $volumeNames .name -}}
{{- end -}}
{{- if and $v.autoscaleEnabled (gt (int $v.autoscaleMin) (int $v.autoscaleMax)) -}}
{{- fail (printf "autoscaleMin=%d is above autoscaleMax=%d: the API server refuses such a HorizontalPodAutoscaler; raise autoscaleMax or lower autoscaleMin" (int $v.autoscaleMin) (int $v.autoscaleMax)) -}}
{{- end -}}
{{- if ne $v.global.istioNamespace .Release.Namespace -}}
{{- fail (printf "global.istioNamespace=%s differs from the release namespace %s: the webhook and the mesh root would point at Service istiod in %s, which this release does not create; install into %s or set global.istioNamespace=%s" $v.global.istioNamespace .Release.Namespace $v.global.istioNamespace $v.global.istioNamespace .Release.Namespace) -}}
{{- end -}}
{{- $tags := list -}}
{{- range $v.revisionTags -}}
{{- if has . $tags -}}
{{- fail (printf "revisionTags: %s is listed twice" .) -}}
{{- end -}}
{{- $tags = append $tags . -}}
{{- end -}}
{{- end -}}

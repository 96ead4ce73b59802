{{/*
Names and labels shared by every ccmkit chart. The objects are named after
the chart, not the release: a cluster runs one cloud-controller-manager, and
the names then match examples/manifests/<cloud> (so the Deployment's or
DaemonSet's selector is the manifests' too).
*/}}

{{/* The workload's name and the app.kubernetes.io/name label. */}}
{{- define "ccmkit-common.fullname" -}}
{{- default .Chart.Name .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* The selector: the manifests' only pod label, so it never changes. */}}
{{- define "ccmkit-common.selectorLabels" -}}
app.kubernetes.io/name: {{ include "ccmkit-common.fullname" . }}
{{- end -}}

{{/* Labels on every object the chart renders. */}}
{{- define "ccmkit-common.labels" -}}
{{ include "ccmkit-common.selectorLabels" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ include "ccmkit-common.imageTag" . | replace "+" "_" | trunc 63 | trimSuffix "-" | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: ccmkit
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end -}}

{{/* The ServiceAccount the CCM runs as, and the base of the RBAC names. */}}
{{- define "ccmkit-common.serviceAccountName" -}}
{{- required "serviceAccount.name is required" .Values.serviceAccount.name -}}
{{- end -}}

{{/* The image tag: image.tag, else the chart's appVersion. */}}
{{- define "ccmkit-common.imageTag" -}}
{{- default .Chart.AppVersion .Values.image.tag -}}
{{- end -}}

{{/* registry/repository:tag, with @digest when image.digest is set. */}}
{{- define "ccmkit-common.image" -}}
{{- $img := .Values.image -}}
{{- $repo := $img.repository -}}
{{- if $img.registry -}}
{{- $repo = printf "%s/%s" $img.registry $img.repository -}}
{{- end -}}
{{- if $img.digest -}}
{{- printf "%s:%s@%s" $repo (include "ccmkit-common.imageTag" .) $img.digest -}}
{{- else -}}
{{- printf "%s:%s" $repo (include "ccmkit-common.imageTag" .) -}}
{{- end -}}
{{- end -}}

{{/*
Leader election is on, except for a Deployment of one replica, which has
nobody to hand over to (as hcloud's chart does): --leader-elect=false saves
the Lease traffic.
*/}}
{{- define "ccmkit-common.leaderElect" -}}
{{- if and (eq .Values.kind "Deployment") (eq (int .Values.replicaCount) 1) -}}
false
{{- else -}}
true
{{- end -}}
{{- end -}}

{{/* The credentials Secret: created by the chart, or an existing one. */}}
{{- define "ccmkit-common.secretName" -}}
{{- required "secret.name is required" .Values.secret.name -}}
{{- end -}}

{{/* Where metrics.tls.secretName is mounted. */}}
{{- define "ccmkit-common.tlsDir" -}}
/etc/ccmkit/tls
{{- end -}}

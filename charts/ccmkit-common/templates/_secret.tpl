{{/*
ccmkit-common.secret renders the credentials Secret when secret.create is
true; otherwise the chart reads the existing Secret secret.name. Called
with a dict:
  ctx         the chart's root context (.)
  stringData  the Secret's keys and values (the cloud chart requires them);
              null values are left out
*/}}
{{- define "ccmkit-common.secret" -}}
{{- $ := .ctx -}}
{{- if $.Values.secret.create -}}
apiVersion: v1
kind: Secret
metadata:
  name: {{ include "ccmkit-common.secretName" $ }}
  namespace: {{ $.Release.Namespace }}
  labels:
    {{- include "ccmkit-common.labels" $ | nindent 4 }}
type: Opaque
stringData:
  {{- range $key, $value := .stringData }}
  {{- if not (kindIs "invalid" $value) }}
  {{ $key }}: {{ toString $value | quote }}
  {{- end }}
  {{- end }}
{{- end -}}
{{- end -}}

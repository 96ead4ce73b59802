{{/*
Helpers of the brightbox-csi-driver chart. The objects are those of
examples/manifests/brightbox/csi, whose comments say why each field is
there; a test renders the chart at its defaults and compares. The pieces
every CSI chart shares (sidecars, env, StorageClasses) are
ccmkit-common's (_csi.tpl there).
*/}}

{{/* The driver name, fixed (PVs carry it). */}}
{{- define "brightbox-csi.driverName" -}}
csi.brightbox.com
{{- end -}}

{{/*
The controller's credentials, as the Brightbox CCM chart passes them: the
API URL and client ID from the Secret, the client secret read from the
mounted Secret (BRIGHTBOX_CLIENT_SECRET_FILE) and re-read when it
changes, so rotating it needs no restart.
*/}}
{{- define "brightbox-csi.credentialsEnv" -}}
{{- $secret := include "ccmkit-common.secretName" . -}}
- name: BRIGHTBOX_API_URL
  valueFrom:
    secretKeyRef:
      name: {{ $secret }}
      key: BRIGHTBOX_API_URL
- name: BRIGHTBOX_CLIENT
  valueFrom:
    secretKeyRef:
      name: {{ $secret }}
      key: BRIGHTBOX_CLIENT
- name: BRIGHTBOX_CLIENT_SECRET_FILE
  value: /etc/brightbox/BRIGHTBOX_CLIENT_SECRET
{{- end -}}

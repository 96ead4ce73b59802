{{/*
Helpers of the triton-csi-driver chart. The objects are those of
examples/manifests/triton/csi, whose comments say why each field is there;
a test renders the chart at its defaults and compares. The pieces every
CSI chart shares (sidecars, env, StorageClasses) are ccmkit-common's
(_csi.tpl there).
*/}}

{{/* The driver name, fixed (PVs carry it). */}}
{{- define "triton-csi.driverName" -}}
tritonnfs.csi.joyent.com
{{- end -}}

{{/*
The controller's credentials, as the Triton CCM chart passes them: the URL,
account, user (optional) and key ID from the Secret, the private key read
from the mounted Secret (TRITON_KEY_MATERIAL_FILE) and re-read when it
changes, so a rotated key needs no restart.
*/}}
{{- define "triton-csi.credentialsEnv" -}}
{{- $secret := include "ccmkit-common.secretName" . -}}
{{- range list "TRITON_URL" "TRITON_ACCOUNT" "TRITON_USER" "TRITON_KEY_ID" }}
- name: {{ . }}
  valueFrom:
    secretKeyRef:
      name: {{ $secret }}
      key: {{ . }}
      {{- if eq . "TRITON_USER" }}
      optional: true
      {{- end }}
{{- end }}
- name: TRITON_KEY_MATERIAL_FILE
  value: /etc/triton/TRITON_KEY_MATERIAL
{{- end -}}

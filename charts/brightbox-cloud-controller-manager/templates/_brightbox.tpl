{{/*
The Brightbox parts of the workload: the API URL and client ID from the
Secret, the client secret read from the mounted Secret
(BRIGHTBOX_CLIENT_SECRET_FILE) and re-read when it changes, so rotating it
needs no restart. A directory mount, not subPath: subPath mounts never see
Secret updates.
*/}}
{{- define "brightbox.env" -}}
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

{{- define "brightbox.volumeMounts" -}}
- name: brightbox-credentials
  mountPath: /etc/brightbox
  readOnly: true
{{- end -}}

{{- define "brightbox.volumes" -}}
- name: brightbox-credentials
  secret:
    secretName: {{ include "ccmkit-common.secretName" . }}
    items:
      - key: BRIGHTBOX_CLIENT_SECRET
        path: BRIGHTBOX_CLIENT_SECRET
{{- end -}}

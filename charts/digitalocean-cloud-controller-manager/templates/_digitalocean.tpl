{{/*
The DigitalOcean parts of the workload: the token, read from the mounted
Secret (DO_ACCESS_TOKEN_FILE) and re-read when it changes, so rotating the
Secret needs no restart. A directory mount, not subPath: subPath mounts
never see Secret updates.
*/}}
{{- define "digitalocean.env" -}}
- name: DO_ACCESS_TOKEN_FILE
  value: /etc/digitalocean/access-token
{{- end -}}

{{- define "digitalocean.volumeMounts" -}}
- name: digitalocean-token
  mountPath: /etc/digitalocean
  readOnly: true
{{- end -}}

{{- define "digitalocean.volumes" -}}
- name: digitalocean-token
  secret:
    secretName: {{ include "ccmkit-common.secretName" . }}
    items:
      - key: access-token
        path: access-token
{{- end -}}

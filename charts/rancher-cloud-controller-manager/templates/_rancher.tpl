{{/*
The Rancher parts of the workload: the URL and access key from the Secret,
the secret key read from the mounted Secret (CATTLE_SECRET_KEY_FILE), so it
is in no container spec and a rotated key is picked up from the file. A
directory mount, not subPath: subPath mounts never see Secret updates.
*/}}
{{- define "rancher.env" -}}
{{- $secret := include "ccmkit-common.secretName" . -}}
{{- range list "CATTLE_URL" "CATTLE_ACCESS_KEY" }}
- name: {{ . }}
  valueFrom:
    secretKeyRef:
      name: {{ $secret }}
      key: {{ . }}
{{- end }}
- name: CATTLE_SECRET_KEY_FILE
  value: /etc/rancher/CATTLE_SECRET_KEY
{{- end -}}

{{- define "rancher.volumeMounts" -}}
- name: rancher-credentials
  mountPath: /etc/rancher
  readOnly: true
{{- end -}}

{{- define "rancher.volumes" -}}
- name: rancher-credentials
  secret:
    secretName: {{ include "ccmkit-common.secretName" . }}
    items:
      - key: CATTLE_SECRET_KEY
        path: CATTLE_SECRET_KEY
{{- end -}}

{{/*
The Triton parts of the workload: the account and key ID from the Secret,
the private key read from the mounted Secret (TRITON_KEY_MATERIAL_FILE) and
re-read when it changes, so a rotated key needs no restart. A directory
mount, not subPath: subPath mounts never see Secret updates.
*/}}
{{- define "triton.env" -}}
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

{{- define "triton.volumeMounts" -}}
- name: triton-credentials
  mountPath: /etc/triton
  readOnly: true
{{- end -}}

{{- define "triton.volumes" -}}
- name: triton-credentials
  secret:
    secretName: {{ include "ccmkit-common.secretName" . }}
    items:
      - key: TRITON_KEY_MATERIAL
        path: TRITON_KEY_MATERIAL
{{- end -}}

{{/* --cluster-name: required, it names what the cluster owns. */}}
{{- define "triton.args" -}}
- "--cluster-name={{ required "clusterName is required: it names what this cluster owns in the account" .Values.clusterName }}"
{{- end -}}

{{/*
The triton-cmon controller's objects in kube-system: its CMON client
certificate (a Secret) and Prometheus scrape job (a ConfigMap); create
cannot be limited by name. Not needed with --controllers=*,-triton-cmon.
*/}}
{{- define "triton.roleRules" -}}
- apiGroups: [""]
  resources: [secrets, configmaps]
  verbs: [create]
- apiGroups: [""]
  resources: [secrets]
  resourceNames: [{{ .Values.env.TRITON_CMON_SECRET | default "triton-cmon-client" }}]
  verbs: [get, update]
- apiGroups: [""]
  resources: [configmaps]
  resourceNames: [{{ .Values.env.TRITON_CMON_CONFIGMAP | default "triton-cmon-prometheus" }}]
  verbs: [get, update]
{{- end -}}

{{/*
Helpers of the rancher-csi-driver chart. The objects are those of
examples/manifests/rancher/csi, whose comments say why each field is
there; a test renders the chart at its defaults and compares. The pieces
every CSI chart shares (sidecars, env, StorageClasses) are
ccmkit-common's (_csi.tpl there).
*/}}

{{/* The driver name, fixed (PVs carry it). */}}
{{- define "rancher-csi.driverName" -}}
cattle.csi.rancher.com
{{- end -}}

{{/*
The controller's credentials, as the Rancher CCM chart passes them: the
URL and access key from the Secret, the secret key read from the mounted
Secret (CATTLE_SECRET_KEY_FILE) and re-read when it changes, so a rotated
key needs no restart.
*/}}
{{- define "rancher-csi.credentialsEnv" -}}
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

{{/*
The host directory of the volume plugins' sockets: the driver's
RANCHER_VOLUME_PLUGIN_DIR (env), else its default.
*/}}
{{- define "rancher-csi.pluginDir" -}}
{{- dig "RANCHER_VOLUME_PLUGIN_DIR" "" (.Values.env | default dict) | default "/run/docker/plugins" | trimSuffix "/" -}}
{{- end -}}

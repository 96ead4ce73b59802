{{/*
Helpers of the openstack-csi-driver chart. The objects are those of
examples/manifests/openstack/csi, whose comments say why each field is
there; a test renders the chart at its defaults and compares. The pieces
every CSI chart shares (sidecars, env, StorageClasses, the
snapshot-controller) are ccmkit-common's (_csi.tpl there).
*/}}

{{/* The driver name: cinder-csi-plugin's, fixed (PVs carry it). */}}
{{- define "openstack-csi.driverName" -}}
cinder.csi.openstack.org
{{- end -}}

{{/*
The pod annotations of the controller and the node plugin: the default
container, the values' podAnnotations and, when the chart creates the
cloud.conf Secret, a checksum of its data, so the pods restart (and read
cloud.conf again) when it changes. Called with a dict:
  ctx    the chart's root context
  extra  the workload's podAnnotations value
*/}}
{{- define "openstack-csi.podAnnotations" -}}
{{- $a := dict "kubectl.kubernetes.io/default-container" "cinder-csi-plugin" -}}
{{- if .ctx.Values.secret.create -}}
{{- $_ := set $a "checksum/cloud-config" (include "openstack-csi.secretData" .ctx | sha256sum) -}}
{{- end -}}
{{- toYaml (merge (dict) $a (.extra | default dict)) -}}
{{- end -}}

{{/* The created Secret's data: cloud.conf and secret.data's files. */}}
{{- define "openstack-csi.secretData" -}}
{{- $data := deepCopy (.Values.secret.data | default dict) -}}
{{- $_ := set $data "cloud.conf" (printf "%s\n" (include "openstack-csi.cloudConf" . | trim)) -}}
{{- toYaml $data -}}
{{- end -}}

{{/*
cloud.conf: cloudConfigContents verbatim, else the sections of cloudConfig
in gcfg syntax, every value quoted and escaped (\\, \", \n) so that # and ;
in a secret are not comments; as the OpenStack CCM chart writes it.
*/}}
{{- define "openstack-csi.cloudConf" -}}
{{- if .Values.cloudConfigContents -}}
{{- .Values.cloudConfigContents -}}
{{- else -}}
{{- $sections := list (list "Global" "global") (list "BlockStorage" "blockStorage") (list "Metadata" "metadata") -}}
{{- $cfg := .Values.cloudConfig -}}
{{- if not $cfg.global -}}
{{- fail "secret.create needs cloud.conf: set cloudConfig.global (auth-url, region, credentials) or cloudConfigContents" -}}
{{- end -}}
{{- range $sections -}}
{{- $keys := get $cfg (index . 1) -}}
{{- if $keys }}
[{{ index . 0 }}]
{{- range $key, $value := $keys }}
{{- $values := ternary $value (list $value) (kindIs "slice" $value) }}
{{- range $values }}
{{ $key }} = "{{ toString . | replace "\\" "\\\\" | replace "\"" "\\\"" | replace "\n" "\\n" }}"
{{- end }}
{{- end }}
{{ end -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* The driver's arguments every mode takes after --mode. */}}
{{- define "openstack-csi.commonArgs" -}}
- --endpoint=unix:///csi/csi.sock
- --cloud-config=/etc/config/cloud.conf
{{- end -}}

{{/* The cloud.conf Secret's mount, in both driver containers. */}}
{{- define "openstack-csi.secretMount" -}}
- name: secret-cinderplugin
  mountPath: /etc/config
  readOnly: true
{{- end -}}

{{- define "openstack-csi.secretVolume" -}}
- name: secret-cinderplugin
  secret:
    secretName: {{ include "ccmkit-common.secretName" . }}
{{- end -}}

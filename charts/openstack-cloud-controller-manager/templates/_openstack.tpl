{{/*
The OpenStack parts of the workload: the whole cloud-config Secret mounted
at /etc/config, as OCCM mounts it (cloud.conf and any file it names).
*/}}
{{- define "openstack.volumeMounts" -}}
- name: cloud-config
  mountPath: /etc/config
  readOnly: true
{{- end -}}

{{- define "openstack.volumes" -}}
- name: cloud-config
  secret:
    secretName: {{ include "ccmkit-common.secretName" . }}
{{- end -}}

{{/*
The CCM follows cloud.conf's credentials, and reads its other settings at
start-up: when the chart creates it, a checksum of the Secret's data
restarts the pods on a change.
*/}}
{{- define "openstack.podAnnotations" -}}
{{- if .Values.secret.create -}}
checksum/cloud-config: {{ include "openstack.secretData" . | sha256sum }}
{{- end -}}
{{- end -}}

{{/* The created Secret's data: cloud.conf and secret.data's files. */}}
{{- define "openstack.secretData" -}}
{{- $data := deepCopy (.Values.secret.data | default dict) -}}
{{- $_ := set $data "cloud.conf" (printf "%s\n" (include "openstack.cloudConf" . | trim)) -}}
{{- toYaml $data -}}
{{- end -}}

{{/*
cloud.conf: cloudConfigContents verbatim, else the sections of cloudConfig
in gcfg syntax, every value quoted and escaped (\\, \", \n) so that # and ;
in a secret are not comments.
*/}}
{{- define "openstack.cloudConf" -}}
{{- if .Values.cloudConfigContents -}}
{{- .Values.cloudConfigContents -}}
{{- else -}}
{{- $sections := list (list "Global" "global") (list "LoadBalancer" "loadBalancer") (list "Networking" "networking") (list "Route" "route") (list "Metadata" "metadata") (list "BlockStorage" "blockStorage") -}}
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

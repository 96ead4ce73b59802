{{/*
Helpers of the digitalocean-csi-driver chart. The objects are those of
examples/manifests/digitalocean/csi, whose comments say why each field is
there; a test renders the chart at its defaults and compares.
*/}}

{{/* The driver name: csi-digitalocean's, fixed (PVs carry it). */}}
{{- define "digitalocean-csi.driverName" -}}
dobs.csi.digitalocean.com
{{- end -}}

{{/*
A sidecar container of the controller pod. Called with a dict:
  ctx   the chart's root context
  name  the container's name
  s     its values (sidecars.<x>: image, extraArgs, resources)
  args  list of the chart's arguments
*/}}
{{- define "digitalocean-csi.sidecar" -}}
{{- $c := .ctx.Values.controller -}}
- name: {{ .name }}
  image: {{ .s.image | quote }}
  args:
    {{- range (concat .args (.s.extraArgs | default list)) }}
    - {{ . | quote }}
    {{- end }}
  {{- with .s.resources }}
  resources:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with $c.securityContext }}
  securityContext:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  volumeMounts:
    - name: socket-dir
      mountPath: /csi
{{- end -}}

{{/* The arguments every controller sidecar takes. */}}
{{- define "digitalocean-csi.sidecarArgs" -}}
- --csi-address=/csi/csi.sock
- --leader-election
- --leader-election-namespace={{ .Release.Namespace }}
{{- end -}}

{{/*
The driver container's environment besides its own (env, then extraEnv):
the documented variables that are set.
*/}}
{{- define "digitalocean-csi.env" -}}
{{- range $name, $value := .Values.env }}
{{- if not (kindIs "invalid" $value) }}
{{- if ne (toString $value) "" }}
- name: {{ $name }}
  value: {{ toString $value | quote }}
{{- end }}
{{- end }}
{{- end }}
{{- with .Values.extraEnv }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/* The driver's image pull policy, when one is set. */}}
{{- define "digitalocean-csi.pullPolicy" -}}
{{- with .Values.image.pullPolicy }}
imagePullPolicy: {{ . }}
{{- end }}
{{- end -}}

{{/*
The default affinity of a workload of several replicas: prefer different
nodes for pods with the selector labels (a dict) given.
*/}}
{{- define "digitalocean-csi.spreadAffinity" -}}
podAntiAffinity:
  preferredDuringSchedulingIgnoredDuringExecution:
    - weight: 100
      podAffinityTerm:
        topologyKey: kubernetes.io/hostname
        labelSelector:
          matchLabels:
            {{- toYaml . | nindent 12 }}
{{- end -}}

{{/*
ccmkit-common.workload renders the CCM as a Deployment or a DaemonSet
(.Values.kind), the objects of examples/manifests/<cloud>/deployment.yaml
and daemonset.yaml. Called with a dict:
  ctx             the chart's root context (.)
  args            YAML list of arguments the cloud derives from its values
  env             YAML list of the cloud's credential variables
  volumeMounts    YAML list of the cloud's mounts (the credentials)
  volumes         YAML list of the cloud's volumes
  podAnnotations  YAML map of annotations the cloud adds (e.g. a checksum)
*/}}
{{- define "ccmkit-common.workload" -}}
{{- $ := .ctx -}}
{{- $v := $.Values -}}
{{- $deployment := eq $v.kind "Deployment" -}}
apiVersion: apps/v1
kind: {{ $v.kind }}
metadata:
  name: {{ include "ccmkit-common.fullname" $ }}
  namespace: {{ $.Release.Namespace }}
  labels:
    {{- include "ccmkit-common.labels" $ | nindent 4 }}
spec:
  {{- if $deployment }}
  replicas: {{ $v.replicaCount }}
  revisionHistoryLimit: 2
  strategy:
    type: RollingUpdate
    rollingUpdate:
      # hostNetwork pins the secure port on each node: replace pods in place.
      maxSurge: 0
      maxUnavailable: 1
  {{- else }}
  updateStrategy:
    type: RollingUpdate
    rollingUpdate:
      # One node at a time; leader election hands over to another replica.
      maxUnavailable: 1
  {{- end }}
  selector:
    matchLabels:
      {{- include "ccmkit-common.selectorLabels" $ | nindent 6 }}
  template:
    metadata:
      labels:
        {{- include "ccmkit-common.selectorLabels" $ | nindent 8 }}
        {{- with $v.podLabels }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      {{- $annotations := merge (dict) ($v.podAnnotations | default dict) (fromYaml (.podAnnotations | default "")) }}
      {{- with $annotations }}
      annotations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
    spec:
      serviceAccountName: {{ include "ccmkit-common.serviceAccountName" $ }}
      {{- with $v.priorityClassName }}
      priorityClassName: {{ . }}
      {{- end }}
      {{- $nodeSelector := $v.nodeSelector }}
      {{- if and (not $deployment) (not $nodeSelector) }}
      {{- $nodeSelector = dict "node-role.kubernetes.io/control-plane" "" }}
      {{- end }}
      {{- with $nodeSelector }}
      nodeSelector:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      hostNetwork: {{ $v.hostNetwork }}
      dnsPolicy: {{ $v.dnsPolicy }}
      {{- with $v.imagePullSecrets }}
      imagePullSecrets:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $v.tolerations }}
      tolerations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- if $v.affinity }}
      affinity:
        {{- toYaml $v.affinity | nindent 8 }}
      {{- else if $deployment }}
      affinity:
        {{- include "ccmkit-common.defaultAffinity" $ | nindent 8 }}
      {{- end }}
      {{- with $v.podSecurityContext }}
      securityContext:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      containers:
        - name: {{ include "ccmkit-common.fullname" $ }}
          image: {{ include "ccmkit-common.image" $ | quote }}
          imagePullPolicy: {{ $v.image.pullPolicy }}
          args:
            {{- include "ccmkit-common.args" . | trim | nindent 12 }}
          {{- $env := include "ccmkit-common.env" . | trim }}
          {{- if $env }}
          env:
            {{- $env | nindent 12 }}
          {{- end }}
          ports:
            # /metrics (authenticated and authorized through the API server)
            # and /healthz.
            - name: https
              containerPort: {{ $v.securePort }}
              protocol: TCP
          livenessProbe:
            httpGet:
              path: /healthz
              port: {{ $v.securePort }}
              scheme: HTTPS
            initialDelaySeconds: 15
            periodSeconds: 10
            timeoutSeconds: 5
            failureThreshold: 3
          {{- with $v.resources }}
          resources:
            {{- toYaml . | nindent 12 }}
          {{- end }}
          {{- with $v.securityContext }}
          securityContext:
            {{- toYaml . | nindent 12 }}
          {{- end }}
          {{- $mounts := include "ccmkit-common.volumeMounts" . | trim }}
          {{- if $mounts }}
          volumeMounts:
            {{- $mounts | nindent 12 }}
          {{- end }}
      {{- $volumes := include "ccmkit-common.volumes" . | trim }}
      {{- if $volumes }}
      volumes:
        {{- $volumes | nindent 8 }}
      {{- end }}
{{- end -}}

{{/*
A Deployment's default affinity, as the manifests: prefer control-plane
nodes, and one replica per node (with hostNetwork two replicas could not
share the secure port anyway).
*/}}
{{- define "ccmkit-common.defaultAffinity" -}}
nodeAffinity:
  preferredDuringSchedulingIgnoredDuringExecution:
    - weight: 100
      preference:
        matchExpressions:
          - key: node-role.kubernetes.io/control-plane
            operator: Exists
podAntiAffinity:
  requiredDuringSchedulingIgnoredDuringExecution:
    - topologyKey: kubernetes.io/hostname
      labelSelector:
        matchLabels:
          {{- include "ccmkit-common.selectorLabels" . | nindent 10 }}
{{- end -}}

{{/*
The container's arguments: .Values.args, the cloud's, the ones the chart
owns (leader election, the secure port, its certificate), then extraArgs,
which therefore win over the others (the last occurrence of a flag counts).
*/}}
{{- define "ccmkit-common.args" -}}
{{- $v := .ctx.Values -}}
{{- range $v.args }}
- {{ . | quote }}
{{- end }}
{{- with .args }}
{{ . }}
{{- end }}
- "--leader-elect={{ include "ccmkit-common.leaderElect" .ctx }}"
- "--secure-port={{ $v.securePort }}"
{{- if $v.metrics.tls.secretName }}
- "--tls-cert-file={{ include "ccmkit-common.tlsDir" .ctx }}/tls.crt"
- "--tls-private-key-file={{ include "ccmkit-common.tlsDir" .ctx }}/tls.key"
{{- end }}
{{- range $v.extraArgs }}
- {{ . | quote }}
{{- end }}
{{- end -}}

{{/*
The environment: the cloud's credential variables, then .Values.env (a map
of the cloud's documented variables; empty values are left out), then
extraEnv.
*/}}
{{- define "ccmkit-common.env" -}}
{{- $v := .ctx.Values -}}
{{- with .env }}
{{ . }}
{{- end }}
{{- range $name, $value := $v.env }}
{{- if not (kindIs "invalid" $value) }}
{{- if ne (toString $value) "" }}
- name: {{ $name }}
  value: {{ toString $value | quote }}
{{- end }}
{{- end }}
{{- end }}
{{- with $v.extraEnv }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/* The cloud's mounts, the serving certificate's, then extraVolumeMounts. */}}
{{- define "ccmkit-common.volumeMounts" -}}
{{- $v := .ctx.Values -}}
{{- with .volumeMounts }}
{{ . }}
{{- end }}
{{- if $v.metrics.tls.secretName }}
- name: serving-cert
  mountPath: {{ include "ccmkit-common.tlsDir" .ctx }}
  readOnly: true
{{- end }}
{{- with $v.extraVolumeMounts }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/* The cloud's volumes, the serving certificate's, then extraVolumes. */}}
{{- define "ccmkit-common.volumes" -}}
{{- $v := .ctx.Values -}}
{{- with .volumes }}
{{ . }}
{{- end }}
{{- if $v.metrics.tls.secretName }}
- name: serving-cert
  secret:
    secretName: {{ $v.metrics.tls.secretName }}
{{- end }}
{{- with $v.extraVolumes }}
{{ toYaml . }}
{{- end }}
{{- end -}}

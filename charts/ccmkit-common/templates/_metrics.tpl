{{/*
ccmkit-common.metricsService renders a Service in front of the secure port
(metrics.service.enabled): /metrics over HTTPS, authenticated and authorized
through the API server (a bearer token allowed to get the non-resource URL
/metrics).
*/}}
{{- define "ccmkit-common.metricsService" -}}
{{- if .Values.metrics.service.enabled -}}
apiVersion: v1
kind: Service
metadata:
  name: {{ include "ccmkit-common.fullname" . }}-metrics
  namespace: {{ .Release.Namespace }}
  labels:
    {{- include "ccmkit-common.labels" . | nindent 4 }}
  {{- with .Values.metrics.service.annotations }}
  annotations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
spec:
  type: ClusterIP
  selector:
    {{- include "ccmkit-common.selectorLabels" . | nindent 4 }}
  ports:
    - name: https
      port: {{ .Values.securePort }}
      targetPort: https
      protocol: TCP
{{- end -}}
{{- end -}}

{{/*
ccmkit-common.serviceMonitor renders a prometheus-operator ServiceMonitor
for the metrics Service (metrics.serviceMonitor.enabled). Prometheus sends
its own ServiceAccount token and verifies the serving certificate unless
metrics.serviceMonitor.insecureSkipVerify is set.
*/}}
{{- define "ccmkit-common.serviceMonitor" -}}
{{- $sm := .Values.metrics.serviceMonitor -}}
{{- if $sm.enabled -}}
{{- if not .Values.metrics.service.enabled -}}
{{- fail "metrics.serviceMonitor.enabled needs metrics.service.enabled" -}}
{{- end -}}
{{- $tls := deepCopy ($sm.tlsConfig | default dict) -}}
{{- $_ := set $tls "insecureSkipVerify" $sm.insecureSkipVerify -}}
{{- if not (hasKey $tls "serverName") -}}
{{- $_ := set $tls "serverName" (printf "%s-metrics.%s.svc" (include "ccmkit-common.fullname" .) .Release.Namespace) -}}
{{- end -}}
apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata:
  name: {{ include "ccmkit-common.fullname" . }}
  namespace: {{ .Release.Namespace }}
  labels:
    {{- include "ccmkit-common.labels" . | nindent 4 }}
    {{- with $sm.labels }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
spec:
  jobLabel: app.kubernetes.io/name
  namespaceSelector:
    matchNames:
      - {{ .Release.Namespace }}
  selector:
    matchLabels:
      {{- include "ccmkit-common.selectorLabels" . | nindent 6 }}
  endpoints:
    - port: https
      scheme: https
      path: /metrics
      {{- with $sm.interval }}
      interval: {{ . }}
      {{- end }}
      {{- with $sm.scrapeTimeout }}
      scrapeTimeout: {{ . }}
      {{- end }}
      bearerTokenFile: /var/run/secrets/kubernetes.io/serviceaccount/token
      tlsConfig:
        {{- toYaml $tls | nindent 8 }}
      {{- with $sm.relabelings }}
      relabelings:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $sm.metricRelabelings }}
      metricRelabelings:
        {{- toYaml . | nindent 8 }}
      {{- end }}
{{- end -}}
{{- end -}}

{{/*
ccmkit-common.podController renders any workload of pods (a Deployment,
StatefulSet or DaemonSet) whose pod spec the chart writes itself: the
object, its labels, the selector and the pod template around the pod spec.
ccmkit-common.workload is the CCM's; a chart with several workloads of
several containers (the CSI driver's) uses this one. Called with a dict:
  ctx             the chart's root context (.)
  kind            Deployment, StatefulSet or DaemonSet
  name            the object's name
  selectorLabels  dict: the selector, also on the pods
  labels          dict: more labels on the object, over the chart's
                  (optional)
  spec            YAML of the spec's fields before the selector: replicas,
                  serviceName, updateStrategy... (optional)
  podLabels       dict: more labels on the pods (optional)
  podAnnotations  dict: annotations on the pods (optional)
  podSpec         YAML of the pod spec
*/}}
{{- define "ccmkit-common.podController" -}}
{{- $ := .ctx -}}
apiVersion: apps/v1
kind: {{ .kind }}
metadata:
  name: {{ .name }}
  namespace: {{ $.Release.Namespace }}
  labels:
    {{- toYaml (merge (dict) (.labels | default dict) (fromYaml (include "ccmkit-common.labels" $))) | nindent 4 }}
spec:
  {{- with .spec }}
  {{- . | trim | nindent 2 }}
  {{- end }}
  selector:
    matchLabels:
      {{- toYaml .selectorLabels | nindent 6 }}
  template:
    metadata:
      labels:
        {{- toYaml (merge (dict) .selectorLabels (.podLabels | default dict)) | nindent 8 }}
      {{- with .podAnnotations }}
      annotations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
    spec:
      {{- .podSpec | trim | nindent 6 }}
{{- end -}}

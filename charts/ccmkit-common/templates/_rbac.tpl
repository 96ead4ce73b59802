{{/*
ccmkit-common.serviceAccount renders the ServiceAccount the CCM runs as
(serviceAccount.create).
*/}}
{{- define "ccmkit-common.serviceAccount" -}}
{{- if .Values.serviceAccount.create -}}
apiVersion: v1
kind: ServiceAccount
metadata:
  name: {{ include "ccmkit-common.serviceAccountName" . }}
  namespace: {{ .Release.Namespace }}
  labels:
    {{- include "ccmkit-common.labels" . | nindent 4 }}
  {{- with .Values.serviceAccount.annotations }}
  annotations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
{{- end -}}
{{- end -}}

{{/*
ccmkit-common.rbac renders the least-privilege RBAC of
examples/manifests/<cloud>/rbac.yaml (rbac.create), whose comments say why
each rule is there. Called with a dict:
  ctx        the chart's root context (.)
  roleRules  YAML list of the cloud's extra rules in the kube-system Role
The Roles live in kube-system whatever the release namespace: the Lease
(--leader-elect-resource-namespace) and the extension-apiserver-authentication
ConfigMap are there.
*/}}
{{- define "ccmkit-common.rbac" -}}
{{- $ := .ctx -}}
{{- if $.Values.rbac.create -}}
{{- $sa := include "ccmkit-common.serviceAccountName" $ -}}
{{- $subjects := list (dict "kind" "ServiceAccount" "name" $sa "namespace" $.Release.Namespace) -}}
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: system:{{ $sa }}
  labels:
    {{- include "ccmkit-common.labels" $ | nindent 4 }}
rules:
  # Initialize Nodes, taint shut-down ones, delete those whose instance is gone.
  - apiGroups: [""]
    resources: [nodes]
    verbs: [get, list, watch, update, patch, delete]
  # Addresses; the route controller's NetworkUnavailable condition.
  - apiGroups: [""]
    resources: [nodes/status]
    verbs: [patch]
  # The informers; ccmkit records the load balancer's ID annotation.
  - apiGroups: [""]
    resources: [services]
    verbs: [list, watch, patch]
  # The load balancer cleanup finalizer and the ingress status.
  - apiGroups: [""]
    resources: [services/status]
    verbs: [patch]
  - apiGroups: [""]
    resources: [events]
    verbs: [create, patch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: system:{{ $sa }}
  labels:
    {{- include "ccmkit-common.labels" $ | nindent 4 }}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: system:{{ $sa }}
subjects:
  {{- toYaml $subjects | nindent 2 }}
---
# Leader election (the Lease kube-system/cloud-controller-manager), and the
# cloud's own objects in kube-system.
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: {{ $sa }}
  namespace: kube-system
  labels:
    {{- include "ccmkit-common.labels" $ | nindent 4 }}
rules:
  - apiGroups: [coordination.k8s.io]
    resources: [leases]
    verbs: [create]
  - apiGroups: [coordination.k8s.io]
    resources: [leases]
    resourceNames: [cloud-controller-manager]
    verbs: [get, update]
  {{- with .roleRules }}
  {{- . | nindent 2 }}
  {{- end }}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: {{ $sa }}
  namespace: kube-system
  labels:
    {{- include "ccmkit-common.labels" $ | nindent 4 }}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: {{ $sa }}
subjects:
  {{- toYaml $subjects | nindent 2 }}
---
# Delegated authentication of the secure port: the client CA and
# request-header settings.
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: {{ $sa }}:extension-apiserver-authentication-reader
  namespace: kube-system
  labels:
    {{- include "ccmkit-common.labels" $ | nindent 4 }}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: extension-apiserver-authentication-reader
subjects:
  {{- toYaml $subjects | nindent 2 }}
---
# Delegated authentication and authorization of the secure port
# (TokenReviews, SubjectAccessReviews): /metrics accepts Prometheus's token.
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: system:{{ $sa }}:auth-delegator
  labels:
    {{- include "ccmkit-common.labels" $ | nindent 4 }}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: system:auth-delegator
subjects:
  {{- toYaml $subjects | nindent 2 }}
{{- end -}}
{{- end -}}

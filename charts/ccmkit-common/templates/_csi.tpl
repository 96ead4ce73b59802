{{/*
Pieces of the CSI driver charts (charts/<cloud>-csi-driver) that do not
depend on the cloud: a controller sidecar, the driver's environment from
the env and extraEnv values, the StorageClasses and VolumeSnapshotClass
from their values, and the cluster's snapshot-controller with its RBAC.
Each chart's objects are those of examples/manifests/<cloud>/csi, which a
test compares with the chart's rendering at its defaults. The values they
read are the same in every CSI chart:

  image.pullPolicy, env, extraEnv, controller.securityContext,
  controller.podSecurityContext, sidecars.<x>.{image,extraArgs,resources},
  storageClasses, volumeSnapshotClass, snapshotController.
*/}}

{{/*
ccmkit-common.csiSidecar is a sidecar container of the controller pod,
sharing the driver's socket in the volume socket-dir at /csi. Called with
a dict:
  ctx   the chart's root context
  name  the container's name
  s     its values (sidecars.<x>: image, extraArgs, resources)
  args  list of the chart's arguments (s.extraArgs come after them)
*/}}
{{- define "ccmkit-common.csiSidecar" -}}
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

{{/*
ccmkit-common.csiSidecarArgs are the arguments every controller sidecar
takes: the socket, and leader election in the release namespace.
*/}}
{{- define "ccmkit-common.csiSidecarArgs" -}}
- --csi-address=/csi/csi.sock
- --leader-election
- --leader-election-namespace={{ .Release.Namespace }}
{{- end -}}

{{/*
ccmkit-common.csiEnv is the driver container's environment from the values
(env, then extraEnv): the documented variables that are set, empty and
null ones left out. Empty when there is none, so a container can leave
out env: altogether.
*/}}
{{- define "ccmkit-common.csiEnv" -}}
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

{{/* ccmkit-common.csiPullPolicy is the driver's image pull policy, when set. */}}
{{- define "ccmkit-common.csiPullPolicy" -}}
{{- with .Values.image.pullPolicy }}
imagePullPolicy: {{ . }}
{{- end }}
{{- end -}}

{{/*
ccmkit-common.csiSpreadAffinity is the default affinity of a workload of
several replicas: prefer different nodes for pods with the selector labels
(the dict it is called with).
*/}}
{{- define "ccmkit-common.csiSpreadAffinity" -}}
podAntiAffinity:
  preferredDuringSchedulingIgnoredDuringExecution:
    - weight: 100
      podAffinityTerm:
        topologyKey: kubernetes.io/hostname
        labelSelector:
          matchLabels:
            {{- toYaml . | nindent 12 }}
{{- end -}}

{{/*
ccmkit-common.csiStorageClasses renders one StorageClass per entry of
storageClasses: name, default (the cluster's default class),
reclaimPolicy, parameters (written as strings), allowVolumeExpansion,
volumeBindingMode, mountOptions; unset fields are left out. Called with a
dict:
  ctx     the chart's root context
  driver  the driver name (the provisioner)
*/}}
{{- define "ccmkit-common.csiStorageClasses" -}}
{{- $ := .ctx -}}
{{- $driver := .driver -}}
{{- range $.Values.storageClasses }}
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: {{ required "storageClasses[].name is required" .name }}
  labels:
    {{- include "ccmkit-common.labels" $ | nindent 4 }}
  {{- if .default }}
  annotations:
    storageclass.kubernetes.io/is-default-class: "true"
  {{- end }}
provisioner: {{ $driver }}
{{- with .parameters }}
parameters:
  {{- range $k, $val := . }}
  {{ $k }}: {{ toString $val | quote }}
  {{- end }}
{{- end }}
{{- with .reclaimPolicy }}
reclaimPolicy: {{ . }}
{{- end }}
{{- if hasKey . "allowVolumeExpansion" }}
allowVolumeExpansion: {{ .allowVolumeExpansion }}
{{- end }}
{{- with .volumeBindingMode }}
volumeBindingMode: {{ . }}
{{- end }}
{{- with .mountOptions }}
mountOptions:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}
{{- end -}}

{{/*
ccmkit-common.csiVolumeSnapshotClass renders the VolumeSnapshotClass of
volumeSnapshotClass (create, name, default, deletionPolicy, parameters
written as strings). Called with a dict:
  ctx     the chart's root context
  driver  the driver name
*/}}
{{- define "ccmkit-common.csiVolumeSnapshotClass" -}}
{{- $ := .ctx -}}
{{- $driver := .driver -}}
{{- with $.Values.volumeSnapshotClass }}
{{- if .create }}
apiVersion: snapshot.storage.k8s.io/v1
kind: VolumeSnapshotClass
metadata:
  name: {{ .name }}
  labels:
    {{- include "ccmkit-common.labels" $ | nindent 4 }}
  {{- if .default }}
  annotations:
    snapshot.storage.kubernetes.io/is-default-class: "true"
  {{- end }}
driver: {{ $driver }}
deletionPolicy: {{ .deletionPolicy }}
{{- with .parameters }}
parameters:
  {{- range $k, $val := . }}
  {{ $k }}: {{ toString $val | quote }}
  {{- end }}
{{- end }}
{{- end }}
{{- end }}
{{- end -}}

{{/*
ccmkit-common.csiSnapshotController renders the cluster's
snapshot-controller Deployment (external-snapshotter's, group snapshots
off) when snapshotController.enabled: it runs as the ServiceAccount
snapshot-controller, with the controller's pod and container security
contexts.
*/}}
{{- define "ccmkit-common.csiSnapshotController" -}}
{{- if .Values.snapshotController.enabled }}
{{- include "ccmkit-common.podController" (dict
  "ctx" .
  "kind" "Deployment"
  "name" "snapshot-controller"
  "labels" (dict "app.kubernetes.io/component" "snapshot-controller")
  "selectorLabels" (dict "app.kubernetes.io/name" "snapshot-controller")
  "spec" (include "ccmkit-common.csiSnapshotControllerSpec" .)
  "podSpec" (include "ccmkit-common.csiSnapshotControllerPodSpec" .)) }}
{{- end }}
{{- end -}}

{{- define "ccmkit-common.csiSnapshotControllerSpec" -}}
replicas: {{ .Values.snapshotController.replicas }}
revisionHistoryLimit: 2
minReadySeconds: 35
strategy:
  type: RollingUpdate
  rollingUpdate:
    maxSurge: 0
    maxUnavailable: 1
{{- end -}}

{{- define "ccmkit-common.csiSnapshotControllerPodSpec" -}}
{{- $v := .Values -}}
{{- $sc := $v.snapshotController -}}
serviceAccountName: snapshot-controller
{{- with $sc.priorityClassName }}
priorityClassName: {{ . }}
{{- end }}
{{- with $v.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with $sc.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with $sc.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
affinity:
  {{- if $sc.affinity }}
  {{- toYaml $sc.affinity | nindent 2 }}
  {{- else }}
  {{- include "ccmkit-common.csiSpreadAffinity" (dict "app.kubernetes.io/name" "snapshot-controller") | nindent 2 }}
  {{- end }}
{{- with $v.controller.podSecurityContext }}
securityContext:
  {{- toYaml . | nindent 2 }}
{{- end }}
containers:
  - name: snapshot-controller
    image: {{ $sc.image | quote }}
    args:
      - --leader-election=true
      - "--leader-election-namespace={{ .Release.Namespace }}"
      - --feature-gates=CSIVolumeGroupSnapshot=false
      - --v=2
      {{- range $sc.extraArgs }}
      - {{ . | quote }}
      {{- end }}
    {{- with $sc.resources }}
    resources:
      {{- toYaml . | nindent 6 }}
    {{- end }}
    {{- with $v.controller.securityContext }}
    securityContext:
      {{- toYaml . | nindent 6 }}
    {{- end }}
{{- end -}}

{{/*
ccmkit-common.csiSnapshotControllerRBAC renders the snapshot-controller's
ClusterRole, Role (its Lease in the release namespace) and bindings to the
ServiceAccount snapshot-controller when snapshotController.enabled: those
of external-snapshotter v8.7.0, narrowed (examples/manifests/<cloud>/csi/
rbac.yaml says why each rule is there). Each object starts with ---.
*/}}
{{- define "ccmkit-common.csiSnapshotControllerRBAC" -}}
{{- if .Values.snapshotController.enabled }}
---
# snapshot-controller (external-snapshotter v8.7.0): binds VolumeSnapshots
# to VolumeSnapshotContents, for every CSI driver of the cluster.
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: snapshot-controller-role
  labels:
    {{- include "ccmkit-common.labels" . | nindent 4 }}
rules:
  # list, watch: the informer. get: the source PVC's PV.
  - apiGroups: [""]
    resources: [persistentvolumes]
    verbs: [get, list, watch]
  # list, watch: the informer. get, update: the snapshot-source protection
  # finalizer on the PVC being snapshotted.
  - apiGroups: [""]
    resources: [persistentvolumeclaims]
    verbs: [get, list, watch, update]
  - apiGroups: [""]
    resources: [events]
    verbs: [create, patch]
  - apiGroups: [snapshot.storage.k8s.io]
    resources: [volumesnapshotclasses]
    verbs: [list, watch]
  # create: the content of a new VolumeSnapshot. patch: its finalizers,
  # annotations and deletion policy. delete: the content of a deleted
  # VolumeSnapshot.
  - apiGroups: [snapshot.storage.k8s.io]
    resources: [volumesnapshotcontents]
    verbs: [create, list, watch, patch, delete]
  # get: re-read before a status update. update, patch: finalizers, the
  # default class.
  - apiGroups: [snapshot.storage.k8s.io]
    resources: [volumesnapshots]
    verbs: [get, list, watch, update, patch]
  # The bound content's name, readiness, size and errors.
  - apiGroups: [snapshot.storage.k8s.io]
    resources: [volumesnapshots/status]
    verbs: [update]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: snapshot-controller-binding
  labels:
    {{- include "ccmkit-common.labels" . | nindent 4 }}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: snapshot-controller-role
subjects:
  - kind: ServiceAccount
    name: snapshot-controller
    namespace: {{ .Release.Namespace }}
---
# Leader election of the snapshot-controller: its Lease in the release
# namespace.
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: snapshot-controller-leader-election
  namespace: {{ .Release.Namespace }}
  labels:
    {{- include "ccmkit-common.labels" . | nindent 4 }}
rules:
  - apiGroups: [coordination.k8s.io]
    resources: [leases]
    verbs: [create]
  - apiGroups: [coordination.k8s.io]
    resources: [leases]
    resourceNames: [snapshot-controller-leader]
    verbs: [get, update]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: snapshot-controller-leader-election
  namespace: {{ .Release.Namespace }}
  labels:
    {{- include "ccmkit-common.labels" . | nindent 4 }}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: snapshot-controller-leader-election
subjects:
  - kind: ServiceAccount
    name: snapshot-controller
    namespace: {{ .Release.Namespace }}
{{- end }}
{{- end -}}

{{/*
ccmkit-common.csiLeaderElectionRole renders the Role and RoleBinding of the
controller sidecars' leader election: creating Leases, and getting and
updating theirs by name (csi-lib-utils derives them from the driver name:
every character but [a-zA-Z0-9-] becomes -), and the Events leader
election records. Called with a dict:
  ctx             the chart's root context
  name            the Role's and RoleBinding's name
  serviceAccount  the controller's ServiceAccount
  leases          the Leases' names
*/}}
{{- define "ccmkit-common.csiLeaderElectionRole" -}}
{{- $ := .ctx -}}
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: {{ .name }}
  namespace: {{ $.Release.Namespace }}
  labels:
    {{- include "ccmkit-common.labels" $ | nindent 4 }}
rules:
  - apiGroups: [coordination.k8s.io]
    resources: [leases]
    verbs: [create]
  - apiGroups: [coordination.k8s.io]
    resources: [leases]
    resourceNames:
      {{- toYaml .leases | nindent 6 }}
    verbs: [get, update]
  - apiGroups: [""]
    resources: [events]
    verbs: [create, patch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: {{ .name }}
  namespace: {{ $.Release.Namespace }}
  labels:
    {{- include "ccmkit-common.labels" $ | nindent 4 }}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: {{ .name }}
subjects:
  - kind: ServiceAccount
    name: {{ .serviceAccount }}
    namespace: {{ $.Release.Namespace }}
{{- end -}}

{{/*
ccmkit-common.notes is the text helm prints after an install or upgrade
(each chart's templates/NOTES.txt includes it).
*/}}
{{- define "ccmkit-common.notes" -}}
{{- $name := include "ccmkit-common.fullname" . -}}
{{ $name }} is installed as a {{ .Values.kind }} in {{ .Release.Namespace }}.
{{- if not .Values.secret.create }}

It reads its credentials from the Secret {{ .Release.Namespace }}/{{ include "ccmkit-common.secretName" . }},
which the chart does not create: the pods wait until it exists.
{{- end }}

The kubelets must run with --cloud-provider=external; new Nodes keep the
node.cloudprovider.kubernetes.io/uninitialized taint until the CCM has
initialized them. Check with:

  kubectl -n {{ .Release.Namespace }} logs -l app.kubernetes.io/name={{ $name }} --tail=20
  kubectl get nodes -o custom-columns=NAME:.metadata.name,PROVIDER-ID:.spec.providerID
{{- end -}}

package charts

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ccmkit/ccmkit/providers/openstack"
)

// checkOpenStackCSIValues checks the OpenStack chart's own values: both
// driver containers read cloud.conf from the whole Secret mounted at
// /etc/config; the controller names the cluster (--cluster) as
// clusterName says; a created Secret's cloud.conf is what
// cloudConfigContents or cloudConfig say, as the driver decodes it; and
// the pods restart when the chart's Secret changes (a checksum
// annotation), only then.
func checkOpenStackCSIValues(t *testing.T, c csiChart, v map[string]any, objs []*unstructured.Unstructured) {
	t.Helper()
	_, ctrlSpec := c.controllerWorkload(t, objs)
	ds := c.nodeDaemonSet(t, objs)
	secretName := fmt.Sprint(valueAt(v, "secret", "name"))
	create := valueAt(v, "secret", "create") == true
	annotations := map[string]map[string]string{
		"controller": podAnnotations(t, find(objs, c.controllerKind, c.controller)),
		"node":       podAnnotations(t, find(objs, "DaemonSet", c.node)),
	}
	for name, spec := range map[string]corev1.PodSpec{"controller": ctrlSpec, "node": ds.Spec.Template.Spec} {
		driver := container(t, spec, c.plugin)
		if !slices.Contains(driver.Args, "--cloud-config=/etc/config/cloud.conf") {
			t.Errorf("%s driver args %q lack --cloud-config=/etc/config/cloud.conf", name, driver.Args)
		}
		i := slices.IndexFunc(driver.VolumeMounts, func(m corev1.VolumeMount) bool { return m.MountPath == "/etc/config" })
		if i < 0 {
			t.Errorf("%s driver mounts nothing at /etc/config: %v", name, driver.VolumeMounts)
		} else {
			j := slices.IndexFunc(spec.Volumes, func(vol corev1.Volume) bool { return vol.Name == driver.VolumeMounts[i].Name })
			if j < 0 || spec.Volumes[j].Secret == nil || spec.Volumes[j].Secret.SecretName != secretName || len(spec.Volumes[j].Secret.Items) > 0 {
				t.Errorf("%s: /etc/config is not the whole Secret %s", name, secretName)
			}
		}
		if _, has := annotations[name]["checksum/cloud-config"]; has != create {
			t.Errorf("%s pods: checksum/cloud-config annotation %v, secret.create %v", name, has, create)
		}
	}
	ctrl := container(t, ctrlSpec, c.plugin)
	cluster := fmt.Sprint(valueAt(v, "clusterName"))
	hasCluster := slices.ContainsFunc(ctrl.Args, func(a string) bool { return strings.HasPrefix(a, "--cluster=") })
	switch {
	case cluster != "" && !slices.Contains(ctrl.Args, "--cluster="+cluster):
		t.Errorf("controller args %q lack --cluster=%s", ctrl.Args, cluster)
	case cluster == "" && hasCluster:
		t.Errorf("controller args %q set --cluster, clusterName is empty", ctrl.Args)
	}
	if create {
		checkCloudConf(t, v, find(objs, "Secret", secretName))
	}
}

// checkCloudConf: the Secret's cloud.conf decodes as the driver decodes
// it (openstack.INI) and holds what the values set: cloudConfigContents
// verbatim (but for surrounding blank space), or cloudConfig's [Global] auth-url, region and application
// credential (quoted, so # and ; in it survive) and [BlockStorage]
// node-volume-attach-limit.
func checkCloudConf(t *testing.T, v map[string]any, secret *unstructured.Unstructured) {
	t.Helper()
	data, _, _ := unstructured.NestedStringMap(secret.Object, "stringData")
	conf, ok := data["cloud.conf"]
	if !ok {
		t.Fatalf("the Secret has no cloud.conf: %v", data)
	}
	if contents := fmt.Sprint(valueAt(v, "cloudConfigContents")); contents != "" {
		if strings.TrimSpace(conf) != strings.TrimSpace(contents) {
			t.Errorf("cloud.conf %q, want cloudConfigContents %q", conf, contents)
		}
		return
	}
	var cfg openstack.Config
	if err := openstack.INI.Decode([]byte(conf), &cfg); err != nil {
		t.Fatalf("cloud.conf does not decode: %v\n%s", err, conf)
	}
	global, _ := valueAt(v, "cloudConfig", "global").(map[string]any)
	secretValue, err := cfg.Global.ApplicationCredentialSecret.Reveal()
	if err != nil {
		t.Fatal(err)
	}
	for key, got := range map[string]string{
		"auth-url": cfg.Global.AuthURL, "region": cfg.Global.Region, "application-credential-secret": secretValue,
	} {
		if want, set := global[key]; set && fmt.Sprint(want) != got {
			t.Errorf("cloud.conf [Global] %s = %q, values say %q", key, got, want)
		}
	}
	if want := valueAt(v, "cloudConfig", "blockStorage", "node-volume-attach-limit"); want != nil &&
		fmt.Sprint(want) != fmt.Sprint(cfg.BlockStorage.NodeVolumeAttachLimit) {
		t.Errorf("cloud.conf [BlockStorage] node-volume-attach-limit = %d, values say %v", cfg.BlockStorage.NodeVolumeAttachLimit, want)
	}
}

// podAnnotations are the annotations of a workload's pod template.
func podAnnotations(t *testing.T, workload *unstructured.Unstructured) map[string]string {
	t.Helper()
	if workload == nil {
		t.Fatal("no workload rendered")
	}
	a, _, err := unstructured.NestedStringMap(workload.Object, "spec", "template", "metadata", "annotations")
	if err != nil {
		t.Fatalf("%s %s: %v", workload.GetKind(), workload.GetName(), err)
	}
	return a
}

// checkBrightboxCSIValues checks the Brightbox chart's own values: the
// controller takes the API URL and client from the Secret and the client
// secret from its mounted file, as the Brightbox CCM's chart does; the
// node plugin, which makes no API call, gets no credential.
func checkBrightboxCSIValues(t *testing.T, c csiChart, v map[string]any, objs []*unstructured.Unstructured) {
	t.Helper()
	_, ctrlSpec := c.controllerWorkload(t, objs)
	ctrl := container(t, ctrlSpec, c.plugin)
	secretName := fmt.Sprint(valueAt(v, "secret", "name"))
	for _, key := range []string{"BRIGHTBOX_API_URL", "BRIGHTBOX_CLIENT"} {
		if !slices.ContainsFunc(ctrl.Env, func(e corev1.EnvVar) bool {
			return e.Name == key && e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil &&
				e.ValueFrom.SecretKeyRef.Name == secretName && e.ValueFrom.SecretKeyRef.Key == key
		}) {
			t.Errorf("controller env lacks %s from the Secret %s: %v", key, secretName, ctrl.Env)
		}
	}
	const secretFile = "/etc/brightbox/BRIGHTBOX_CLIENT_SECRET"
	if !slices.ContainsFunc(ctrl.Env, func(e corev1.EnvVar) bool { return e.Name == "BRIGHTBOX_CLIENT_SECRET_FILE" && e.Value == secretFile }) {
		t.Errorf("controller env lacks BRIGHTBOX_CLIENT_SECRET_FILE=%s: %v", secretFile, ctrl.Env)
	}
	node := container(t, c.nodeDaemonSet(t, objs).Spec.Template.Spec, c.plugin)
	for _, e := range node.Env {
		if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil || e.Name == "BRIGHTBOX_CLIENT_SECRET_FILE" {
			t.Errorf("the node plugin gets a credential: %s", e.Name)
		}
	}
}

// checkTritonCSIValues checks the Triton chart's own values: the
// controller takes the URL, account, user (optional) and key ID from the
// Secret and the private key from its mounted file, as the Triton CCM's
// chart does; the node plugin, which makes no CloudAPI call, gets no
// credential, and the host's mdata-get (node.mdataGet, at
// /usr/sbin/mdata-get, on the image's PATH) and metadata serial port
// (node.metadataDevice) as the values say.
func checkTritonCSIValues(t *testing.T, c csiChart, v map[string]any, objs []*unstructured.Unstructured) {
	t.Helper()
	_, ctrlSpec := c.controllerWorkload(t, objs)
	ctrl := container(t, ctrlSpec, c.plugin)
	secretName := fmt.Sprint(valueAt(v, "secret", "name"))
	for _, key := range []string{"TRITON_URL", "TRITON_ACCOUNT", "TRITON_USER", "TRITON_KEY_ID"} {
		if !slices.ContainsFunc(ctrl.Env, func(e corev1.EnvVar) bool {
			return e.Name == key && e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil &&
				e.ValueFrom.SecretKeyRef.Name == secretName && e.ValueFrom.SecretKeyRef.Key == key
		}) {
			t.Errorf("controller env lacks %s from the Secret %s: %v", key, secretName, ctrl.Env)
		}
	}
	const keyFile = "/etc/triton/TRITON_KEY_MATERIAL"
	if !slices.ContainsFunc(ctrl.Env, func(e corev1.EnvVar) bool { return e.Name == "TRITON_KEY_MATERIAL_FILE" && e.Value == keyFile }) {
		t.Errorf("controller env lacks TRITON_KEY_MATERIAL_FILE=%s: %v", keyFile, ctrl.Env)
	}
	nodeSpec := c.nodeDaemonSet(t, objs).Spec.Template.Spec
	node := container(t, nodeSpec, c.plugin)
	for _, e := range node.Env {
		if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil || strings.HasPrefix(e.Name, "TRITON_KEY_MATERIAL") {
			t.Errorf("the node plugin gets a credential: %s", e.Name)
		}
	}
	for _, m := range []struct {
		value    string
		hostType corev1.HostPathType
		at       func(host string) string
	}{
		{"mdataGet", corev1.HostPathFile, func(string) string { return "/usr/sbin/mdata-get" }},
		{"metadataDevice", corev1.HostPathCharDev, func(host string) string { return host }},
	} {
		host, _ := valueAt(v, "node", m.value).(string)
		var got []string
		for _, vol := range nodeSpec.Volumes {
			if hp := vol.HostPath; hp != nil && hp.Type != nil && *hp.Type == m.hostType {
				i := slices.IndexFunc(node.VolumeMounts, func(vm corev1.VolumeMount) bool { return vm.Name == vol.Name })
				if i < 0 {
					t.Errorf("hostPath volume %s is not mounted in the node plugin", vol.Name)
					continue
				}
				got = append(got, hp.Path+" at "+node.VolumeMounts[i].MountPath)
			}
		}
		var want []string
		if host != "" {
			want = []string{host + " at " + m.at(host)}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("node.%s %q: the host's %s mounted in the node plugin (-want +got):\n%s", m.value, host, m.hostType, diff)
		}
	}
}

// checkRancherCSIValues checks the Rancher chart's own values: the
// controller takes the URL and access key from the Secret and the secret
// key from its mounted file, as the Rancher CCM's chart does; the node
// plugin, which makes no Cattle API call, gets no credential but its node
// name from the downward API, and sees the host's volume plugin sockets
// (env RANCHER_VOLUME_PLUGIN_DIR, /run/docker/plugins when empty) and the
// plugins' mountpoints (node.volumesDir) at the host's paths, the
// mountpoints with HostToContainer propagation.
func checkRancherCSIValues(t *testing.T, c csiChart, v map[string]any, objs []*unstructured.Unstructured) {
	t.Helper()
	_, ctrlSpec := c.controllerWorkload(t, objs)
	ctrl := container(t, ctrlSpec, c.plugin)
	secretName := fmt.Sprint(valueAt(v, "secret", "name"))
	for _, key := range []string{"CATTLE_URL", "CATTLE_ACCESS_KEY"} {
		if !slices.ContainsFunc(ctrl.Env, func(e corev1.EnvVar) bool {
			return e.Name == key && e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil &&
				e.ValueFrom.SecretKeyRef.Name == secretName && e.ValueFrom.SecretKeyRef.Key == key
		}) {
			t.Errorf("controller env lacks %s from the Secret %s: %v", key, secretName, ctrl.Env)
		}
	}
	const keyFile = "/etc/rancher/CATTLE_SECRET_KEY"
	if !slices.ContainsFunc(ctrl.Env, func(e corev1.EnvVar) bool { return e.Name == "CATTLE_SECRET_KEY_FILE" && e.Value == keyFile }) {
		t.Errorf("controller env lacks CATTLE_SECRET_KEY_FILE=%s: %v", keyFile, ctrl.Env)
	}
	nodeSpec := c.nodeDaemonSet(t, objs).Spec.Template.Spec
	node := container(t, nodeSpec, c.plugin)
	for _, e := range node.Env {
		if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil || strings.HasPrefix(e.Name, "CATTLE_") {
			t.Errorf("the node plugin gets a credential: %s", e.Name)
		}
	}
	if !slices.ContainsFunc(node.Env, func(e corev1.EnvVar) bool {
		return e.Name == "NODE_NAME" && e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "spec.nodeName"
	}) {
		t.Errorf("node env lacks NODE_NAME from spec.nodeName: %v", node.Env)
	}
	sockets, _ := valueAt(v, "env", "RANCHER_VOLUME_PLUGIN_DIR").(string)
	if sockets == "" {
		sockets = "/run/docker/plugins"
	}
	volumes, _ := valueAt(v, "node", "volumesDir").(string)
	for _, want := range []struct {
		host        string
		propagation corev1.MountPropagationMode
	}{{strings.TrimSuffix(sockets, "/"), ""}, {strings.TrimSuffix(volumes, "/"), corev1.MountPropagationHostToContainer}} {
		i := slices.IndexFunc(nodeSpec.Volumes, func(vol corev1.Volume) bool { return vol.HostPath != nil && vol.HostPath.Path == want.host })
		if i < 0 {
			t.Errorf("the node pod has no hostPath volume %s: %v", want.host, nodeSpec.Volumes)
			continue
		}
		j := slices.IndexFunc(node.VolumeMounts, func(m corev1.VolumeMount) bool { return m.Name == nodeSpec.Volumes[i].Name })
		if j < 0 {
			t.Errorf("the node plugin does not mount the host's %s", want.host)
			continue
		}
		m := node.VolumeMounts[j]
		var got corev1.MountPropagationMode
		if m.MountPropagation != nil {
			got = *m.MountPropagation
		}
		if m.MountPath != want.host || got != want.propagation {
			t.Errorf("the host's %s is mounted at %s with propagation %q, want at %[1]s with %q", want.host, m.MountPath, got, want.propagation)
		}
	}
}

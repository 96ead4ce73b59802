package frameworktest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// MountedSettings are the settings of the CCM that the Deployment in
// manifests/deployment.yaml runs with secret mounted as the Deployment
// mounts it, as the kubelet would give them: its container's environment
// (values, and keys of secret; an optional key secret lacks is left out)
// and its --cloud-config, with secret's volumes written to directories of
// a temporary directory standing in for their mount paths.
func MountedSettings(t *testing.T, manifests string, secret *corev1.Secret) Settings {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(manifests, "deployment.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var d appsv1.Deployment
	if err := yaml.UnmarshalStrict(b, &d); err != nil || d.Kind != "Deployment" || len(d.Spec.Template.Spec.Containers) == 0 {
		t.Fatalf("%s/deployment.yaml is no Deployment with a container (%v)", manifests, err)
	}
	pod := d.Spec.Template.Spec
	c := pod.Containers[0]
	mounts := secretMounts(t, pod, c, secret)
	s := Settings{Env: map[string]string{}}
	for _, e := range c.Env {
		switch ref := secretKeyRef(e); {
		case e.ValueFrom == nil:
			s.Env[e.Name] = mounts.path(e.Value)
		case ref == nil || ref.Name != secret.Name:
		case secret.Data[ref.Key] != nil:
			s.Env[e.Name] = string(secret.Data[ref.Key])
		case ref.Optional == nil || !*ref.Optional:
			t.Errorf("%s's %s reads the key %s of the Secret, which make-secret does not print", c.Name, e.Name, ref.Key)
		}
	}
	for _, arg := range append(c.Command, c.Args...) {
		if path, ok := strings.CutPrefix(arg, "--cloud-config="); ok {
			conf, err := os.ReadFile(mounts.path(path))
			if err != nil {
				t.Fatalf("%s's --cloud-config: %v", c.Name, err)
			}
			s.CloudConfig = string(conf)
		}
	}
	return s
}

func secretKeyRef(e corev1.EnvVar) *corev1.SecretKeySelector {
	if e.ValueFrom == nil {
		return nil
	}
	return e.ValueFrom.SecretKeyRef
}

// mounts maps the mount paths of a Secret's volumes to the directories
// that hold its files here.
type mounts map[string]string

// path is p with a mount path in it replaced by its directory here.
func (m mounts) path(p string) string {
	for mountPath, dir := range m {
		if rest, ok := strings.CutPrefix(p, mountPath); ok && (rest == "" || strings.HasPrefix(rest, "/")) {
			return dir + rest
		}
	}
	return p
}

// secretMounts writes secret's files as pod's volumes of it hold them
// (its items, or every key), each volume in a directory of its own, and
// returns where container c mounts them.
func secretMounts(t *testing.T, pod corev1.PodSpec, c corev1.Container, secret *corev1.Secret) mounts {
	t.Helper()
	m := mounts{}
	for _, v := range pod.Volumes {
		if v.Secret == nil || v.Secret.SecretName != secret.Name {
			continue
		}
		dir := filepath.Join(t.TempDir(), v.Name)
		items := v.Secret.Items
		if items == nil {
			for k := range secret.Data {
				items = append(items, corev1.KeyToPath{Key: k, Path: k})
			}
		}
		for _, item := range items {
			if secret.Data[item.Key] == nil {
				t.Errorf("the volume %s mounts the key %s of the Secret, which make-secret does not print", v.Name, item.Key)
			}
			path := filepath.Join(dir, item.Path)
			if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, secret.Data[item.Key], 0o600); err != nil {
				t.Fatal(err)
			}
		}
		for _, vm := range c.VolumeMounts {
			if vm.Name == v.Name {
				m[strings.TrimSuffix(vm.MountPath, "/")] = dir
			}
		}
	}
	return m
}

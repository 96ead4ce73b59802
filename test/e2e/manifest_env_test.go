package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// envAsShipped returns the environment the CCM container of the shipped
// Deployment manifest gets from secret, as the kubelet would give it: plain
// values, secretKeyRef values (an optional key the Secret lacks is left
// out), and the Secret's items written as files under dir in place of the
// container's secret volume mounts, with values naming a file under a mount
// path rewritten to the file under dir.
func envAsShipped(t *testing.T, manifest string, secret *corev1.Secret, dir string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	var d appsv1.Deployment
	if err := yaml.UnmarshalStrict(b, &d); err != nil {
		t.Fatalf("%s: %v", manifest, err)
	}
	pod := d.Spec.Template.Spec
	if len(pod.Containers) != 1 {
		t.Fatalf("%s: %d containers, want the CCM's only", manifest, len(pod.Containers))
	}
	mounts := mountSecretVolumes(t, pod, secret, dir)
	env := map[string]string{}
	for _, e := range pod.Containers[0].Env {
		switch {
		case e.ValueFrom == nil:
			env[e.Name] = underMount(e.Value, mounts)
		case e.ValueFrom.SecretKeyRef != nil:
			ref := e.ValueFrom.SecretKeyRef
			if ref.Name != secret.Name {
				t.Fatalf("%s: %s reads Secret %s, not %s", manifest, e.Name, ref.Name, secret.Name)
			}
			v, ok := secret.Data[ref.Key]
			if !ok && (ref.Optional == nil || !*ref.Optional) {
				t.Fatalf("%s: %s reads key %s, which the Secret lacks", manifest, e.Name, ref.Key)
			}
			if ok {
				env[e.Name] = string(v)
			}
		default:
			t.Fatalf("%s: %s: only values and secretKeyRefs are supported here", manifest, e.Name)
		}
	}
	return env
}

// mountSecretVolumes writes the items of every secret volume of pod that
// the container mounts to files under dir, and returns the mount paths
// with the directories standing in for them.
func mountSecretVolumes(t *testing.T, pod corev1.PodSpec, secret *corev1.Secret, dir string) map[string]string {
	t.Helper()
	volumes := map[string]*corev1.SecretVolumeSource{}
	for _, v := range pod.Volumes {
		if v.Secret != nil {
			volumes[v.Name] = v.Secret
		}
	}
	mounts := map[string]string{}
	for _, m := range pod.Containers[0].VolumeMounts {
		src, ok := volumes[m.Name]
		if !ok {
			continue
		}
		if src.SecretName != secret.Name {
			t.Fatalf("volume %s mounts Secret %s, not %s", m.Name, src.SecretName, secret.Name)
		}
		local := filepath.Join(dir, m.Name)
		if err := os.MkdirAll(local, 0o700); err != nil {
			t.Fatal(err)
		}
		for _, it := range src.Items {
			v, ok := secret.Data[it.Key]
			if !ok {
				t.Fatalf("volume %s mounts key %s, which the Secret lacks", m.Name, it.Key)
			}
			if err := os.WriteFile(filepath.Join(local, it.Path), v, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		mounts[m.MountPath] = local
	}
	return mounts
}

// underMount rewrites a path under one of the mount paths to the local
// directory standing in for it.
func underMount(v string, mounts map[string]string) string {
	for mountPath, local := range mounts {
		if rest, ok := strings.CutPrefix(v, mountPath+"/"); ok {
			return filepath.Join(local, rest)
		}
	}
	return v
}

package triton_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	"sigs.k8s.io/yaml"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/providers/triton"
	"github.com/ccmkit/ccmkit/providers/triton/tritonsim"
)

// make-secret, given the key as a path and no TRITON_KEY_ID, checks the
// credentials against CloudAPI and prints the Secret the shipped manifests
// read: the key itself and its MD5 fingerprint; nothing secret is logged.
func TestMakeSecret(t *testing.T) {
	sim := tritonsim.NewServer(t, tritonsim.Options{})
	path := filepath.Join(t.TempDir(), "id_rsa")
	if err := os.WriteFile(path, sim.AccountKeyPEM(), 0o600); err != nil {
		t.Fatal(err)
	}
	vars := sim.Env(sim.URL())
	vars["TRITON_KEY_MATERIAL"], vars["TRITON_KEY_ID"] = path, ""
	for _, k := range []string{"TRITON_URL", "TRITON_ACCOUNT", "TRITON_USER", "TRITON_KEY_ID", "TRITON_KEY_MATERIAL", "TRITON_KEY_MATERIAL_FILE", "SDC_URL", "SDC_ACCOUNT", "SDC_KEY_ID", "SDC_KEY_MATERIAL"} {
		t.Setenv(k, vars[k])
	}
	var logBuf, out bytes.Buffer
	klog.LogToStderr(false)
	klog.SetOutput(&logBuf)
	t.Cleanup(func() {
		klog.LogToStderr(true)
		fs := flag.NewFlagSet("", flag.ContinueOnError)
		klog.InitFlags(fs)
		_ = fs.Set("v", "0")
	})
	cmd := framework.NewCommand(triton.New())
	cmd.SetArgs([]string{"make-secret", "-v=10"})
	cmd.SetOut(&out)
	cmd.SetErr(&logBuf)
	if err := cmd.Execute(); err != nil {
		t.Fatalf("make-secret: %v\n%s", err, logBuf.String())
	}
	klog.Flush()
	var s corev1.Secret
	if err := yaml.UnmarshalStrict(out.Bytes(), &s); err != nil {
		t.Fatalf("not a Secret: %v\n%s", err, out.String())
	}
	if s.Name != "triton-credentials" || s.Namespace != "kube-system" {
		t.Errorf("Secret %s/%s, want kube-system/triton-credentials", s.Namespace, s.Name)
	}
	got := func(k string) string { return string(s.Data[k]) + s.StringData[k] }
	if got("TRITON_KEY_ID") != sim.KeyFingerprint() || strings.TrimSpace(got("TRITON_KEY_MATERIAL")) != strings.TrimSpace(string(sim.AccountKeyPEM())) ||
		got("TRITON_URL") != sim.URL() || got("TRITON_ACCOUNT") != sim.Account() {
		t.Errorf("Secret data %v", s.Data)
	}
	if line := strings.Split(string(sim.AccountKeyPEM()), "\n")[1]; strings.Contains(logBuf.String(), line) {
		t.Errorf("make-secret logged the key:\n%s", logBuf.String())
	}
}

package frameworktest

import (
	"bytes"
	"flag"
	"maps"
	"os"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	"sigs.k8s.io/yaml"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/framework/config"
)

// RunMakeSecret runs "<cloud>-cloud-controller-manager make-secret args..."
// in-process, as the binary would, and returns what it printed to stdout
// (the Secret) and what it logged (klog and the command's stderr), for a
// test to check that the log holds no secret. The process environment is
// the provider's settings: see SetConfigEnv.
func RunMakeSecret(t testing.TB, p framework.Provider, args ...string) (stdout, log string, err error) {
	t.Helper()
	var logBuf, out bytes.Buffer
	klog.LogToStderr(false)
	klog.SetOutput(&logBuf)
	t.Cleanup(func() {
		klog.LogToStderr(true)
		fs := flag.NewFlagSet("", flag.ContinueOnError)
		klog.InitFlags(fs)
		_ = fs.Set("v", "0")
	})
	cmd := framework.NewCommand(p)
	cmd.SetArgs(append([]string{"make-secret"}, args...))
	cmd.SetOut(&out)
	cmd.SetErr(&logBuf)
	err = cmd.Execute()
	klog.Flush()
	return out.String(), logBuf.String(), err
}

// SetConfigEnv makes vars the whole configuration environment of p for
// the rest of the test (t.Setenv): every variable p's config reads, the
// _FILE variants of its secrets included, is set to its value in vars or
// to "" (unset), and so is every other variable vars names (settings a
// provider reads outside its config struct).
func SetConfigEnv(t testing.TB, p framework.Provider, vars map[string]string) {
	t.Helper()
	names := map[string]bool{}
	if c, ok := p.(framework.Configurable); ok {
		fields, err := config.Fields(c.Config())
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range fields {
			if f.Env == "" {
				continue
			}
			names[f.Env] = true
			if f.Type == "secret" {
				names[f.Env+"_FILE"] = true
			}
		}
	}
	for k := range vars {
		names[k] = true
	}
	for k := range names {
		t.Setenv(k, vars[k])
	}
}

// ReadSecret parses a Secret manifest, as make-secret prints it or as a
// provider ships it (examples/manifests/<cloud>/secret.example.yaml),
// failing t when it is not a v1 Secret. Its StringData is folded into Data.
func ReadSecret(t testing.TB, manifest []byte) *corev1.Secret {
	t.Helper()
	var s corev1.Secret
	if err := yaml.UnmarshalStrict(manifest, &s); err != nil {
		t.Fatalf("not a Secret: %v\n%s", err, manifest)
	}
	if s.APIVersion != "v1" || s.Kind != "Secret" {
		t.Fatalf("a %s %s, not a v1 Secret", s.APIVersion, s.Kind)
	}
	if s.Data == nil {
		s.Data = map[string][]byte{}
	}
	for k, v := range s.StringData {
		s.Data[k] = []byte(v)
	}
	s.StringData = nil
	return &s
}

// MatchesShippedSecret fails t unless got has the namespace, name and keys
// of the Secret in the provider's shipped manifest (its
// examples/manifests/<cloud>/secret.example.yaml, at path): what
// make-secret prints must be what the shipped manifests read.
func MatchesShippedSecret(t testing.TB, got *corev1.Secret, path string) {
	t.Helper()
	shipped, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := ReadSecret(t, shipped)
	if got.Namespace != want.Namespace || got.Name != want.Name {
		t.Errorf("Secret %s/%s, the shipped manifests read %s/%s", got.Namespace, got.Name, want.Namespace, want.Name)
	}
	if g, w := slices.Sorted(maps.Keys(got.Data)), slices.Sorted(maps.Keys(want.Data)); !slices.Equal(g, w) {
		t.Errorf("keys %v, the shipped Secret has %v", g, w)
	}
}

package skeleton_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2/ktesting"

	"github.com/ccmkit/ccmkit/examples/skeleton"
	"github.com/ccmkit/ccmkit/examples/skeleton/skeletonsim"
	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/framework/cloudapi"
	"github.com/ccmkit/ccmkit/framework/config"
)

const clusterName = "test-cluster"

// fixture is the provider initialized against a fresh simulator, the way
// framework.Main would do it, with a fake Kubernetes API.
type fixture struct {
	sim    *skeletonsim.Server
	cloud  *framework.Cloud
	kube   *fake.Clientset
	events *record.FakeRecorder
	ctx    context.Context
}

// newFixture starts a simulator and the provider on it. The load-balancer
// cache is on, as in production; tune changes the Env.
func newFixture(t *testing.T, opts skeletonsim.Options, tune ...func(*framework.Env)) *fixture {
	t.Helper()
	sim := skeletonsim.NewServer(t, opts)
	f := &fixture{sim: sim, kube: fake.NewClientset(), events: record.NewFakeRecorder(100)}
	var err error
	f.cloud, f.ctx, err = newCloud(t, f.kube, f.events, map[string]string{
		"SKELETON_API_URL": sim.URL(),
		"SKELETON_TOKEN":   sim.Token(),
		"SKELETON_REGION":  "sk-default",
		"SKELETON_API_QPS": "0", // unlimited: tests should not wait for tokens
	}, tune...)
	if err != nil {
		t.Fatalf("NewCloud: %v", err)
	}
	return f
}

// newCloud runs what framework.Main runs at start-up: load the config from
// vars, Init, build the cloud.
func newCloud(t *testing.T, kube kubernetes.Interface, events record.EventRecorder, vars map[string]string, tune ...func(*framework.Env)) (*framework.Cloud, context.Context, error) {
	_, ctx := ktesting.NewTestContext(t)
	env := &framework.Env{
		Client:      kube,
		Recorder:    events,
		ClusterName: clusterName,
		LookupEnv: func(k string) (string, bool) {
			v, ok := vars[k]
			return v, ok
		},
		// One attempt each, so a fault is seen as is.
		CloudAPI:         cloudapi.Options{MaxRetries: -1, Timeout: 5 * time.Second},
		InstanceCacheTTL: -1,
	}
	for _, f := range tune {
		f(env)
	}
	cloud, err := framework.NewCloud(ctx, skeleton.New(), env)
	return cloud, ctx, err
}

func TestConfigErrors(t *testing.T) {
	const token = "tok-do-not-print"
	tests := []struct {
		name     string
		vars     map[string]string
		wantErrs []string
	}{
		{
			name:     "nothing set",
			vars:     map[string]string{},
			wantErrs: []string{"SKELETON_API_URL: required", "SKELETON_TOKEN: required"},
		},
		{
			name:     "no URL",
			vars:     map[string]string{"SKELETON_TOKEN": token},
			wantErrs: []string{"SKELETON_API_URL: required"},
		},
		{
			name:     "not an http URL",
			vars:     map[string]string{"SKELETON_API_URL": "ftp://files.example", "SKELETON_TOKEN": token},
			wantErrs: []string{"SKELETON_API_URL: ftp://files.example is not an http(s) URL"},
		},
		{
			name:     "bad QPS",
			vars:     map[string]string{"SKELETON_API_URL": "http://127.0.0.1:1", "SKELETON_TOKEN": token, "SKELETON_API_QPS": "fast"},
			wantErrs: []string{"SKELETON_API_QPS"},
		},
		{
			name: "token twice",
			vars: map[string]string{
				"SKELETON_API_URL": "http://127.0.0.1:1", "SKELETON_TOKEN": token, "SKELETON_TOKEN_FILE": "/nonexistent",
			},
			wantErrs: []string{"SKELETON_TOKEN and SKELETON_TOKEN_FILE are both set"},
		},
		{
			name:     "token file missing",
			vars:     map[string]string{"SKELETON_API_URL": "http://127.0.0.1:1", "SKELETON_TOKEN_FILE": "/nonexistent/token"},
			wantErrs: []string{"SKELETON_TOKEN_FILE", "/nonexistent/token"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := newCloud(t, nil, nil, tt.vars)
			if err == nil {
				t.Fatal("NewCloud succeeded, want an error")
			}
			for _, want := range tt.wantErrs {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not mention %q", err, want)
				}
			}
			if strings.Contains(err.Error(), token) {
				t.Errorf("error reveals the token: %v", err)
			}
		})
	}
}

func TestInitChecksAccess(t *testing.T) {
	sim := skeletonsim.NewServer(t, skeletonsim.Options{Token: "the-right-token"})
	down := skeletonsim.NewServer(t, skeletonsim.Options{})
	down.Close()
	tests := []struct {
		name    string
		url     string
		token   string
		wantErr string
	}{
		{"wrong token", sim.URL(), "a-wrong-token", "rejected the token"},
		{"unreachable API", down.URL(), "a-wrong-token", "cannot use the Skeleton API at SKELETON_API_URL"},
		{"wrong base path", sim.URL() + "/api", "the-right-token", "cannot use the Skeleton API at SKELETON_API_URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := newCloud(t, nil, nil, map[string]string{"SKELETON_API_URL": tt.url, "SKELETON_TOKEN": tt.token})
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("NewCloud error = %v, want one containing %q", err, tt.wantErr)
			}
			if strings.Contains(err.Error(), tt.token) {
				t.Errorf("error reveals the token: %v", err)
			}
		})
	}
}

// TestTokenRotation rotates the token the way the kubelet updates a Secret
// volume (a new file renamed over the old) and expects the very next
// request to use it, with no restart.
func TestTokenRotation(t *testing.T) {
	sim := skeletonsim.NewServer(t, skeletonsim.Options{Token: "token-1"})
	inst := sim.AddInstance(skeletonsim.Instance{Name: "node-1", PrivateIPv4: "10.0.0.1"})
	path := filepath.Join(t.TempDir(), "token")
	writeAtomically(t, path, "token-1\n")

	cloud, ctx, err := newCloud(t, nil, nil, map[string]string{"SKELETON_API_URL": sim.URL(), "SKELETON_TOKEN_FILE": path})
	if err != nil {
		t.Fatalf("NewCloud: %v", err)
	}
	instances := cloud.Provider().(framework.InstancesProvider).Instances()

	sim.SetToken("token-2") // the cloud rotates first...
	if _, err := instances.InstanceByID(ctx, inst.ID); err == nil || framework.IsNotFound(err) {
		t.Fatalf("with the old token: err = %v, want an authorization error that is not not-found", err)
	}
	writeAtomically(t, path, "token-2\n") // ...then the Secret follows
	if _, err := instances.InstanceByID(ctx, inst.ID); err != nil {
		t.Fatalf("with the rotated token: %v", err)
	}
}

func writeAtomically(t *testing.T, path, content string) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// TestConfigTags catches a config struct tag that package config cannot
// honour, and pins the settings operators rely on.
func TestConfigTags(t *testing.T) {
	fields, err := config.Fields(skeleton.New().Config())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range fields {
		got = append(got, fmt.Sprintf("%s %s required=%v default=%q", f.Env, f.Type, f.Required, f.Default))
	}
	want := []string{
		`SKELETON_API_URL string required=true default=""`,
		`SKELETON_TOKEN secret required=true default=""`,
		`SKELETON_REGION string required=false default=""`,
		`SKELETON_API_QPS float64 required=false default="10"`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("settings (-want +got):\n%s", diff)
	}
}

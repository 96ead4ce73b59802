package rancher_test

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/klog/v2/textlogger"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/framework/cloudapi"
	"github.com/ccmkit/ccmkit/framework/config"
	"github.com/ccmkit/ccmkit/framework/frameworktest"
	"github.com/ccmkit/ccmkit/providers/rancher"
	"github.com/ccmkit/ccmkit/providers/rancher/ranchersim"
)

// newCloud runs what framework.Main runs at start-up for p: load the
// config from vars, Init, build the cloud. counter, if not nil, counts the
// requests made through the framework's HTTP client; ttl is the instance
// cache's (negative: off).
func newCloud(ctx context.Context, p framework.Provider, vars map[string]string, counter *cloudapi.Counter, ttl time.Duration) (*framework.Cloud, error) {
	return framework.NewCloud(ctx, p, &framework.Env{
		ClusterName: "test-cluster",
		LookupEnv: func(k string) (string, bool) {
			v, ok := vars[k]
			return v, ok
		},
		// One attempt each, so a fault is seen as is.
		CloudAPI:         cloudapi.Options{MaxRetries: -1, Timeout: 5 * time.Second, Counter: counter},
		InstanceCacheTTL: ttl,
	})
}

func newProvider() framework.Provider { return rancher.New() }

func with(env map[string]string, kv ...string) map[string]string {
	out := maps.Clone(env)
	for i := 0; i < len(kv); i += 2 {
		if kv[i+1] == "" {
			delete(out, kv[i])
		} else {
			out[kv[i]] = kv[i+1]
		}
	}
	return out
}

// TestStartupFailures: every way the key or the URL can be wrong stops
// the start-up with an error naming the variable, and no secret in it.
func TestStartupFailures(t *testing.T) {
	sim := ranchersim.NewServer(t, ranchersim.Options{})
	env := sim.Env(sim.URL())
	proxy404 := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(proxy404.Close)
	notCattle := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"hello":"world"}`))
	}))
	t.Cleanup(notCattle.Close)
	frameworktest.RunStartupFailures(t, newProvider, []frameworktest.StartupFailure{
		{Name: "nothing set", Env: map[string]string{}, Want: []string{"CATTLE_URL: required", "CATTLE_ACCESS_KEY: required", "CATTLE_SECRET_KEY: required"}},
		{Name: "no secret key", Env: with(env, "CATTLE_SECRET_KEY", ""), Want: []string{"CATTLE_SECRET_KEY: required"}},
		{Name: "secret file missing", Env: with(env, "CATTLE_SECRET_KEY", "", "CATTLE_SECRET_KEY_FILE", "/nonexistent/secret"), Want: []string{"CATTLE_SECRET_KEY_FILE"}},
		{Name: "not a URL", Env: with(env, "CATTLE_URL", "rancher.example.com"), Want: []string{"CATTLE_URL"}},
		{Name: "bad label key", Env: with(env, "RANCHER_REGION_LABELS", "a b"), Want: []string{"RANCHER_REGION_LABELS"}},
		{Name: "rejected secret key", Env: with(env, "CATTLE_SECRET_KEY", "wrong-secret-do-not-print"), Want: []string{"CATTLE_ACCESS_KEY, CATTLE_SECRET_KEY", "401"}},
		{Name: "unknown access key", Env: with(env, "CATTLE_ACCESS_KEY", "0000000000000000NOPE"), Want: []string{"CATTLE_ACCESS_KEY", "401"}},
		{Name: "no such environment", Env: with(env, "CATTLE_URL", sim.URL()+"/v2-beta/projects/1a999"), Want: []string{"CATTLE_URL", "404", "environment"}},
		{Name: "nothing listening", Env: with(env, "CATTLE_URL", "http://127.0.0.1:1/v2-beta/projects/1a5"), Want: []string{"CATTLE_URL: cannot reach"}},
		{Name: "not the API", Env: with(env, "CATTLE_URL", proxy404.URL+"/v2-beta/projects/1a5"), Want: []string{"CATTLE_URL", "404"}},
		{Name: "not Cattle", Env: with(env, "CATTLE_URL", notCattle.URL+"/v2-beta/projects/1a5"), Want: []string{"CATTLE_URL", "X-API-Schemas"}},
	})
	if w := sim.Writes(); w != 0 {
		t.Errorf("%d cloud writes by failed start-ups", w)
	}
}

// TestRequestsGoThroughTheFrameworkClient: the provider's requests, the
// bootstrap's and the lookups', are the framework's (counted, named), a
// /v1 URL (as Rancher injected it into the old CCM's container) works,
// and http.DefaultTransport is left as it was.
func TestRequestsGoThroughTheFrameworkClient(t *testing.T) {
	sim := ranchersim.NewServer(t, ranchersim.Options{})
	uuid := sim.Cloud().AddInstance("node-1")
	for name, vars := range map[string]map[string]string{
		"project URL": sim.Env(sim.URL()),
		"/v1 URL":     with(sim.Env(sim.URL()), "CATTLE_URL", sim.URL()+"/v1"),
	} {
		t.Run(name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			counter := cloudapi.NewCounter()
			p := rancher.New()
			defaultTransport := http.DefaultTransport
			if _, err := newCloud(ctx, p, vars, counter, -1); err != nil {
				t.Fatalf("NewCloud: %v", err)
			}
			if root, schemas := counter.Get("root.get"), counter.Get("schemas.list"); root != 1 || schemas != 1 {
				t.Errorf("bootstrap requests counted: %d root, %d schemas; want 1 each (all: %v)", root, schemas, counter.Snapshot())
			}
			if _, err := p.Instances().InstanceByID(ctx, uuid); err != nil {
				t.Fatalf("InstanceByID: %v", err)
			}
			if got := counter.Get("hosts.list"); got != 1 {
				t.Errorf("%d host lists counted, want 1 (all: %v)", got, counter.Snapshot())
			}
			if http.DefaultTransport != defaultTransport {
				t.Errorf("http.DefaultTransport was replaced by a %T", http.DefaultTransport)
			}
		})
	}
}

// TestSecretsNeverLogged runs the provider at -v=10, where the cloudapi
// transport logs every request with its headers and bodies, through a
// refused key and lookups, and expects neither half of the key in the log.
func TestSecretsNeverLogged(t *testing.T) {
	const (
		access = "ACCESSKEYDONOTPRINT1"
		secret = "secret-key-do-not-print"
	)
	sim := ranchersim.NewServer(t, ranchersim.Options{AccessKey: access, SecretKey: secret})
	uuid := sim.Cloud().AddInstance("node-1")
	var buf bytes.Buffer
	logger := textlogger.NewLogger(textlogger.NewConfig(textlogger.Verbosity(10), textlogger.Output(&buf)))
	ctx := klog.NewContext(t.Context(), logger)
	env := sim.Env(sim.URL())
	if _, err := newCloud(ctx, rancher.New(), with(env, "CATTLE_SECRET_KEY", "wrong-"+secret), nil, -1); err == nil {
		t.Fatal("NewCloud with a wrong secret key succeeded")
	}
	p := rancher.New()
	if _, err := newCloud(ctx, p, env, nil, -1); err != nil {
		t.Fatalf("NewCloud: %v", err)
	}
	if _, err := p.Instances().InstanceByID(ctx, uuid); err != nil {
		t.Fatalf("InstanceByID: %v", err)
	}
	if _, err := p.Instances().InstanceByName(ctx, "node-1"); err != nil {
		t.Fatalf("InstanceByName: %v", err)
	}
	log := buf.String()
	if !strings.Contains(log, "/hosts") || !strings.Contains(log, "requestHeaders") {
		t.Fatalf("the log shows no host request with its headers; is it at -v=10?\n%s", log)
	}
	for _, s := range []string{access, secret} {
		if strings.Contains(log, s) {
			t.Errorf("the log holds %q", s)
		}
	}
}

// TestSecretRotation rotates the secret key in CATTLE_SECRET_KEY_FILE the
// way the kubelet updates a Secret volume and expects the very next
// request, and so the very next lookup, to use it.
func TestSecretRotation(t *testing.T) {
	frameworktest.RunSecretRotation(t, harness, "CATTLE_SECRET_KEY")
}

// TestSettings pins the variables the existing CCM reads and the host
// label settings with their documented defaults, followed by the
// load-balancer settings (RANCHER_LB_*, pinned by lb_config's tests).
func TestSettings(t *testing.T) {
	p := rancher.New()
	fields, err := config.Fields(p.Config())
	if err != nil {
		t.Fatal(err)
	}
	want := append([]string(nil), settings...)
	for _, f := range fields {
		if strings.HasPrefix(f.Env, "RANCHER_LB_") {
			want = append(want, fmt.Sprintf("%s %s required=%v default=%q", f.Env, f.Type, f.Required, f.Default))
		}
	}
	frameworktest.CheckSettings(t, p, want)
}

// settings are the provider core's settings (the load-balancer ones are
// pinned by the load-balancer tests).
var settings = []string{
	`CATTLE_URL string required=false default=""`,
	`CATTLE_ACCESS_KEY secret required=false default=""`,
	`CATTLE_SECRET_KEY secret required=false default=""`,
	`RANCHER_ZONE_LABELS []string required=false default="topology.kubernetes.io/zone,failure-domain.beta.kubernetes.io/zone"`,
	`RANCHER_REGION_LABELS []string required=false default="topology.kubernetes.io/region,failure-domain.beta.kubernetes.io/region"`,
	`RANCHER_INSTANCE_TYPE_LABELS []string required=false default="node.kubernetes.io/instance-type,beta.kubernetes.io/instance-type"`,
	`RANCHER_DEFAULT_INSTANCE_TYPE string required=false default="rancher"`,
	`RANCHER_EXTERNAL_IP_LABELS []string required=false default="io.rancher.host.external_dns_ip"`,
}

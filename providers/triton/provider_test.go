package triton_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"maps"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/klog/v2/textlogger"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/framework/cloudapi"
	"github.com/ccmkit/ccmkit/framework/frameworktest"
	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
	"github.com/ccmkit/ccmkit/providers/triton"
	"github.com/ccmkit/ccmkit/providers/triton/tritonsim"
)

// start runs the provider's Init, through framework.NewCloud as the CCM
// does, against sim with sim's environment changed by env (a "" value
// unsets a variable). Retries are off, so a refused request fails at once.
func start(t *testing.T, sim *tritonsim.Server, env map[string]string) (*triton.Provider, error) {
	t.Helper()
	vars := with(sim.Env(sim.URL()), env)
	_, ctx := ktesting.NewTestContext(t)
	p := triton.New()
	_, err := framework.NewCloud(ctx, p, &framework.Env{
		LookupEnv: func(k string) (string, bool) { v, ok := vars[k]; return v, ok },
		CloudAPI:  cloudapi.Options{MaxRetries: -1},
	})
	return p, err
}

// mustStart is start that fails the test on an error.
func mustStart(t *testing.T, sim *tritonsim.Server, env map[string]string) *triton.Provider {
	t.Helper()
	p, err := start(t, sim, env)
	if err != nil {
		t.Fatalf("Init: %v", err)
	}
	return p
}

// wantErr fails the test unless err is an error containing every want.
func wantErr(t *testing.T, err error, want ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("err = nil, want an error mentioning %q", want)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not mention %q", err, w)
		}
	}
}

func ctx(t *testing.T) context.Context {
	_, c := ktesting.NewTestContext(t)
	return c
}

func newProvider() framework.Provider { return triton.New() }

// with is env changed by changes: a "" value unsets a variable.
func with(env, changes map[string]string) map[string]string {
	out := maps.Clone(env)
	for k, v := range changes {
		if v == "" {
			delete(out, k)
		} else {
			out[k] = v
		}
	}
	return out
}

// keyLines are the lines of PEM or OpenSSH key text that hold the key:
// its base64 body, not the BEGIN and END lines or the headers (an
// encrypted key's Proc-Type and DEK-Info). The few characters of a short
// last line are left out, as they could be found anywhere by chance.
func keyLines(key string) []string {
	var out []string
	for line := range strings.SplitSeq(key, "\n") {
		line = strings.TrimSpace(line)
		if len(line) >= 16 && !strings.HasPrefix(line, "-----") && !strings.Contains(line, ":") {
			out = append(out, line)
		}
	}
	return out
}

// Init learns the account and datacenter, and fails on what CloudAPI
// refuses with an error naming the variable to check and no line of the
// key.
func TestInitFailures(t *testing.T) {
	sim := tritonsim.NewServer(t, tritonsim.Options{})
	env := sim.Env(sim.URL())
	failures := []frameworktest.StartupFailure{
		{Name: "unknown account", Env: with(env, map[string]string{"TRITON_ACCOUNT": "nobody"}), Want: []string{"TRITON_", "a key of account nobody (TRITON_ACCOUNT"}},
		{Name: "unreachable", Env: with(env, map[string]string{"TRITON_URL": "http://127.0.0.1:1"}), Want: []string{"TRITON_URL: CloudAPI at http://127.0.0.1:1 is unreachable"}},
		{Name: "no URL", Env: with(env, map[string]string{"TRITON_URL": ""}), Want: []string{"TRITON_URL: required"}},
		{Name: "no key", Env: with(env, map[string]string{"TRITON_KEY_MATERIAL": ""}), Want: []string{"TRITON_KEY_MATERIAL: required"}},
	}
	for i := range failures {
		failures[i].Secrets = keyLines(string(sim.AccountKeyPEM()))
	}
	frameworktest.RunStartupFailures(t, newProvider, failures)
}

// TestSettings pins the variables: triton-go's and node-triton's
// (TRITON_*, then their older SDC_* names), which a Triton user has
// already set, then the load balancers', the firewall controller's and
// the metrics (CMON) controller's. None is required by its tag: Validate
// requires the URL, the account and the key, under either name.
func TestSettings(t *testing.T) {
	frameworktest.CheckSettings(t, triton.New(), []string{
		`TRITON_URL string required=false default=""`,
		`TRITON_ACCOUNT string required=false default=""`,
		`TRITON_USER string required=false default=""`,
		`TRITON_KEY_ID string required=false default=""`,
		`TRITON_KEY_MATERIAL secret required=false default=""`,
		`TRITON_SKIP_TLS_VERIFY bool required=false default=""`,
		`TRITON_REGION string required=false default=""`,
		`SDC_URL string required=false default=""`,
		`SDC_ACCOUNT string required=false default=""`,
		`SDC_USER string required=false default=""`,
		`SDC_KEY_ID string required=false default=""`,
		`SDC_KEY_MATERIAL secret required=false default=""`,
		`TRITON_LB_MODE string required=false default="auto"`,
		`TRITON_LB_PACKAGE string required=false default=""`,
		`TRITON_LB_IMAGE string required=false default="cloud-load-balancer"`,
		`TRITON_LB_NETWORKS []string required=false default=""`,
		`TRITON_LB_KUBE_PROXY_HEALTH_PORT int32 required=false default="10256"`,
		`TRITON_LB_NODE_SERVICE string required=false default=""`,
		`TRITON_CNS_PUBLIC_ZONE string required=false default=""`,
		`TRITON_CNS_PRIVATE_ZONE string required=false default=""`,
		`TRITON_FIREWALL_NODEPORTS_PUBLIC bool required=false default=""`,
		`TRITON_FIREWALL_NODEPORT_RANGE string required=false default="30000-32767"`,
		`TRITON_FIREWALL_ENABLE_NODES bool required=false default=""`,
		`TRITON_FIREWALL_RESYNC duration required=false default="5m"`,
		`TRITON_CMON_URL string required=false default=""`,
		`TRITON_CMON_GROUP string required=false default=""`,
		`TRITON_CMON_NAMESPACE string required=false default="kube-system"`,
		`TRITON_CMON_SECRET string required=false default="triton-cmon-client"`,
		`TRITON_CMON_CONFIGMAP string required=false default="triton-cmon-prometheus"`,
		`TRITON_CMON_CERT_DIR string required=false default=""`,
		`TRITON_CMON_CERT_VALIDITY duration required=false default="720h"`,
		`TRITON_CMON_RENEW_BEFORE duration required=false default=""`,
		`TRITON_CMON_RESYNC duration required=false default="10m"`,
		`TRITON_CMON_CA_FILE string required=false default=""`,
		`TRITON_CMON_SKIP_TLS_VERIFY bool required=false default=""`,
	})
}

// TestKeyRotation rotates the key in TRITON_KEY_MATERIAL_FILE the way the
// kubelet updates a Secret volume (to a new key of the account, the old
// one removed) and expects the very next request to be signed with it,
// without a restart. TRITON_KEY_ID keeps the old key's fingerprint, as
// in the shipped manifests: there it is a variable from the Secret, which
// a running container never sees change, though make-secret writes the
// new key's fingerprint beside the new key. It is checked against the key
// at start-up only (a restart then reads the new one); every request's
// keyId is the fingerprint of the key that signs it.
func TestKeyRotation(t *testing.T) {
	frameworktest.RunSecretRotation(t, harness, "TRITON_KEY_MATERIAL")
}

// The SDC_* names of triton-go and node-triton work when the TRITON_*
// ones are unset.
func TestInitLegacyVariables(t *testing.T) {
	sim := tritonsim.NewServer(t, tritonsim.Options{})
	env := sim.Env(sim.URL())
	legacy := map[string]string{}
	for k, v := range env {
		legacy[k] = ""
		legacy["SDC_"+strings.TrimPrefix(k, "TRITON_")] = v
	}
	mustStart(t, sim, legacy)
}

// The datacenter's name comes from CloudAPI's Triton-Datacenter-Name
// header or, when /--ping does not send it, from the datacenter list entry
// whose URL is TRITON_URL's.
func TestDatacenterFromTheList(t *testing.T) {
	sim := tritonsim.NewServer(t, tritonsim.Options{Datacenter: "eu-ams-1"})
	m := sim.AddMachine(tritonsim.Machine{})
	defer sim.Inject(simkit.Fault{Op: "GET /--ping", Status: http.StatusServiceUnavailable})()
	p := mustStart(t, sim, nil)
	inst, err := p.Instances().InstanceByID(ctx(t), m.ID)
	if err != nil {
		t.Fatal(err)
	}
	if inst.Zone != "eu-ams-1" || inst.Region != "eu-ams" {
		t.Errorf("zone %q, region %q; want eu-ams-1, eu-ams", inst.Zone, inst.Region)
	}
}

// TestSecretsNeverLogged runs the provider at -v=10, where the cloudapi
// transport logs every request with its headers, through a refused key,
// Init and lookups, and expects neither the key nor a signature in the
// log.
func TestSecretsNeverLogged(t *testing.T) {
	sim := tritonsim.NewServer(t, tritonsim.Options{})
	m := sim.AddMachine(tritonsim.Machine{})
	var buf bytes.Buffer
	logger := textlogger.NewLogger(textlogger.NewConfig(textlogger.Verbosity(10), textlogger.Output(&buf)))
	lctx := klog.NewContext(t.Context(), logger)
	other, _ := rsa.GenerateKey(rand.Reader, 2048)
	otherPEM := pemOf(t, "RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(other), nil)
	for _, env := range []map[string]string{{"TRITON_KEY_MATERIAL": otherPEM, "TRITON_KEY_ID": ""}, nil} {
		vars := maps.Clone(sim.Env(sim.URL()))
		maps.Copy(vars, env)
		p := triton.New()
		_, err := framework.NewCloud(lctx, p, &framework.Env{
			LookupEnv: func(k string) (string, bool) { v, ok := vars[k]; return v, ok && v != "" },
			CloudAPI:  cloudapi.Options{MaxRetries: -1},
		})
		if env != nil {
			if err == nil {
				t.Fatal("Init with a key the account lacks succeeded")
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Instances().InstanceByID(lctx, m.ID); err != nil {
			t.Fatal(err)
		}
	}
	log := buf.String()
	if !strings.Contains(log, "Authorization") {
		t.Fatalf("the log shows no request headers; is it at -v=10?\n%s", log)
	}
	for _, line := range append(keyLines(otherPEM), keyLines(string(sim.AccountKeyPEM()))...) {
		if strings.Contains(log, line) {
			t.Errorf("the log holds a line of a key: %s", line)
		}
	}
	if sig := signature.FindString(log); sig != "" {
		t.Errorf("the log holds a signature: %s", sig)
	}
}

// signature matches an HTTP Signature's value.
var signature = regexp.MustCompile(`signature="[A-Za-z0-9+/]{16,}`)

// A CloudAPI with a certificate this host does not trust (a test install's
// self-signed one) fails Init saying so, unless TRITON_SKIP_TLS_VERIFY.
func TestSkipTLSVerify(t *testing.T) {
	sim := tritonsim.NewServer(t, tritonsim.Options{})
	srv := httptest.NewTLSServer(sim.Handler())
	t.Cleanup(srv.Close)
	_, err := start(t, sim, map[string]string{"TRITON_URL": srv.URL})
	wantErr(t, err, "TRITON_URL: CloudAPI at "+srv.URL+" has a certificate this host does not trust", "TRITON_SKIP_TLS_VERIFY")
	mustStart(t, sim, map[string]string{"TRITON_URL": srv.URL, "TRITON_SKIP_TLS_VERIFY": "true"})
}

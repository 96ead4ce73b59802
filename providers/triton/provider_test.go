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
	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
	"github.com/ccmkit/ccmkit/providers/triton"
	"github.com/ccmkit/ccmkit/providers/triton/tritonsim"
)

// start runs the provider's Init, through framework.NewCloud as the CCM
// does, against sim with sim's environment changed by env (a "" value
// unsets a variable). Retries are off, so a refused request fails at once.
func start(t *testing.T, sim *tritonsim.Server, env map[string]string) (*triton.Provider, error) {
	t.Helper()
	vars := maps.Clone(sim.Env(sim.URL()))
	for k, v := range env {
		if v == "" {
			delete(vars, k)
		} else {
			vars[k] = v
		}
	}
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

// Init learns the account and datacenter, and fails on what CloudAPI
// refuses with an error naming the variable to check.
func TestInitFailures(t *testing.T) {
	sim := tritonsim.NewServer(t, tritonsim.Options{})
	tests := []struct {
		name string
		env  map[string]string
		want []string
	}{
		{"unknown account", map[string]string{"TRITON_ACCOUNT": "nobody"}, []string{"TRITON_"}},
		{"unreachable", map[string]string{"TRITON_URL": "http://127.0.0.1:1"}, []string{"TRITON_URL: CloudAPI at http://127.0.0.1:1 is unreachable"}},
		{"no URL", map[string]string{"TRITON_URL": ""}, []string{"TRITON_URL: required"}},
		{"no key", map[string]string{"TRITON_KEY_MATERIAL": ""}, []string{"TRITON_KEY_MATERIAL: required"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := start(t, sim, tt.env)
			wantErr(t, err, tt.want...)
		})
	}
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
	for _, key := range []string{otherPEM, string(sim.AccountKeyPEM())} {
		for line := range strings.SplitSeq(key, "\n") {
			if len(line) > 20 && strings.Contains(log, line) {
				t.Errorf("the log holds a line of a key: %s", line)
			}
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

package brightbox_test

import (
	"bytes"
	"context"
	"maps"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/klog/v2/textlogger"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/framework/cloudapi"
	"github.com/ccmkit/ccmkit/framework/frameworktest"
	"github.com/ccmkit/ccmkit/providers/brightbox"
	"github.com/ccmkit/ccmkit/providers/brightbox/gbsim"
)

// newCloud runs what framework.Main runs at start-up for p: load the
// config from vars, Init, build the cloud. counter, if not nil, counts the
// requests made through the framework's HTTP client.
func newCloud(ctx context.Context, p framework.Provider, vars map[string]string, counter *cloudapi.Counter) (*framework.Cloud, error) {
	return framework.NewCloud(ctx, p, &framework.Env{
		ClusterName: "test-cluster",
		LookupEnv: func(k string) (string, bool) {
			v, ok := vars[k]
			return v, ok
		},
		// One attempt each, so a fault is seen as is.
		CloudAPI:         cloudapi.Options{MaxRetries: -1, Timeout: 5 * time.Second, Counter: counter},
		InstanceCacheTTL: -1,
	})
}

// mustCloud starts the provider on sim with vars, which must succeed.
func mustCloud(t *testing.T, vars map[string]string) (*brightbox.Provider, framework.Instances, context.Context) {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	p := brightbox.New()
	if _, err := newCloud(ctx, p, vars, nil); err != nil {
		t.Fatalf("NewCloud: %v", err)
	}
	return p, p.Instances(), ctx
}

func newProvider() framework.Provider { return brightbox.New() }

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

// TestSettings pins the variables the existing CCM reads, plus
// BRIGHTBOX_LEGACY_ADDRESSES.
func TestSettings(t *testing.T) {
	frameworktest.CheckSettings(t, brightbox.New(), []string{
		`BRIGHTBOX_CLIENT secret required=false default=""`,
		`BRIGHTBOX_CLIENT_SECRET secret required=false default=""`,
		`BRIGHTBOX_USER_NAME secret required=false default=""`,
		`BRIGHTBOX_PASSWORD secret required=false default=""`,
		`BRIGHTBOX_ACCOUNT string required=false default=""`,
		`BRIGHTBOX_API_URL string required=false default="https://api.gb1.brightbox.com"`,
		`BRIGHTBOX_LEGACY_ADDRESSES bool required=false default="false"`,
	})
}

// TestStartupFailures: every way the credentials, the URL or the account
// can be wrong stops the start-up with an error naming the variable, and
// no secret in it.
func TestStartupFailures(t *testing.T) {
	sim := gbsim.NewServer(t, gbsim.Options{})
	env := sim.Env(sim.URL())
	user := with(env, "BRIGHTBOX_CLIENT", "", "BRIGHTBOX_CLIENT_SECRET", "",
		"BRIGHTBOX_USER_NAME", gbsim.DefaultUsername, "BRIGHTBOX_PASSWORD", gbsim.DefaultPassword)
	proxy404 := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(proxy404.Close)
	frameworktest.RunStartupFailures(t, newProvider, []frameworktest.StartupFailure{
		{Name: "nothing set", Env: map[string]string{}, Want: []string{"BRIGHTBOX_CLIENT: no credentials"}},
		{Name: "client without secret", Env: with(env, "BRIGHTBOX_CLIENT_SECRET", ""), Want: []string{"BRIGHTBOX_CLIENT_SECRET: required"}},
		{Name: "secret without client", Env: with(env, "BRIGHTBOX_CLIENT", ""), Want: []string{"BRIGHTBOX_CLIENT: required"}},
		{Name: "user without password", Env: with(user, "BRIGHTBOX_PASSWORD", ""), Want: []string{"BRIGHTBOX_PASSWORD: required"}},
		{Name: "password without user", Env: with(user, "BRIGHTBOX_USER_NAME", ""), Want: []string{"BRIGHTBOX_USER_NAME: required"}},
		{Name: "application without its secret", Env: with(user, "BRIGHTBOX_CLIENT", "app-12345"), Want: []string{"BRIGHTBOX_CLIENT and BRIGHTBOX_CLIENT_SECRET"}},
		{Name: "secret file missing", Env: with(env, "BRIGHTBOX_CLIENT_SECRET", "", "BRIGHTBOX_CLIENT_SECRET_FILE", "/nonexistent/secret"), Want: []string{"BRIGHTBOX_CLIENT_SECRET_FILE"}},
		{Name: "not a URL", Env: with(env, "BRIGHTBOX_API_URL", "api.gb1.brightbox.com"), Want: []string{"BRIGHTBOX_API_URL"}},
		{Name: "not an account", Env: with(env, "BRIGHTBOX_ACCOUNT", "43ks4"), Want: []string{"BRIGHTBOX_ACCOUNT"}},
		{Name: "rejected client secret", Env: with(env, "BRIGHTBOX_CLIENT_SECRET", "wrong-secret-do-not-print"), Want: []string{"BRIGHTBOX_CLIENT_SECRET", "401"}},
		{Name: "unknown client", Env: with(env, "BRIGHTBOX_CLIENT", "cli-nope1"), Want: []string{"BRIGHTBOX_CLIENT"}},
		{Name: "rejected password", Env: with(user, "BRIGHTBOX_PASSWORD", "wrong-password-do-not-print"), Want: []string{"BRIGHTBOX_PASSWORD"}},
		{Name: "account not theirs", Env: with(env, "BRIGHTBOX_ACCOUNT", "acc-nope1"), Want: []string{"BRIGHTBOX_ACCOUNT", "acc-nope1"}},
		{Name: "nothing listening", Env: with(env, "BRIGHTBOX_API_URL", "http://127.0.0.1:1"), Want: []string{"BRIGHTBOX_API_URL"}},
		{Name: "not the API", Env: with(env, "BRIGHTBOX_API_URL", proxy404.URL), Want: []string{"BRIGHTBOX_API_URL", "404"}},
	})
}

// TestCredentials: an API client and a user through the default
// application both reach the cloud, with or without BRIGHTBOX_ACCOUNT,
// and the token requests go through the framework's HTTP client.
func TestCredentials(t *testing.T) {
	sim := gbsim.NewServer(t, gbsim.Options{})
	id := sim.AddServer(gbsim.CloudServer{Name: "node-1"}).ID
	env := sim.Env(sim.URL())
	user := with(env, "BRIGHTBOX_CLIENT", "", "BRIGHTBOX_CLIENT_SECRET", "",
		"BRIGHTBOX_USER_NAME", gbsim.DefaultUsername, "BRIGHTBOX_PASSWORD", gbsim.DefaultPassword)
	for name, vars := range map[string]map[string]string{
		"API client":                  env,
		"API client, no account":      with(env, "BRIGHTBOX_ACCOUNT", ""),
		"user, default application":   user,
		"user, no account":            with(user, "BRIGHTBOX_ACCOUNT", ""),
		"user, her own application":   with(user, "BRIGHTBOX_CLIENT", gbsim.DefaultAppID, "BRIGHTBOX_CLIENT_SECRET", gbsim.DefaultAppSecret),
		"API URL with trailing slash": with(env, "BRIGHTBOX_API_URL", sim.URL()+"/"),
	} {
		t.Run(name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			counter := cloudapi.NewCounter()
			p := brightbox.New()
			if _, err := newCloud(ctx, p, vars, counter); err != nil {
				t.Fatalf("NewCloud: %v", err)
			}
			if _, err := p.Instances().InstanceByID(ctx, id); err != nil {
				t.Fatalf("InstanceByID: %v", err)
			}
			if got := counter.Get("token.create"); got != 1 {
				t.Errorf("the framework's client made %d token requests, want 1 (all: %v)", got, counter.Snapshot())
			}
		})
	}
}

// TestTokenExpiryMidRun: when the API stops taking the token before its
// expiry, the requests that see the 401 share one new token and none
// fails.
func TestTokenExpiryMidRun(t *testing.T) {
	sim := gbsim.NewServer(t, gbsim.Options{})
	id := sim.AddServer(gbsim.CloudServer{}).ID
	_, inst, ctx := mustCloud(t, sim.Env(sim.URL()))
	if _, err := inst.InstanceByID(ctx, id); err != nil {
		t.Fatal(err)
	}
	before := sim.TokenRequests()
	sim.ExpireTokens()
	var wg sync.WaitGroup
	errs := make(chan error, 10)
	for range 10 {
		wg.Go(func() {
			if _, err := inst.InstanceByID(ctx, id); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("a lookup failed after the token expired: %v", err)
	}
	if got := sim.TokenRequests() - before; got != 1 {
		t.Errorf("%d token requests after the expiry, want 1", got)
	}
}

// TestRefusedTokensBackOff: an API that refuses every token (a revoked
// API client, a broken auth layer) does not cost a token request per call:
// after one fresh token was refused too, the next waits (cloudapi's
// re-authentication backoff), and an accepted call resets it.
func TestRefusedTokensBackOff(t *testing.T) {
	sim := gbsim.NewServer(t, gbsim.Options{})
	id := sim.AddServer(gbsim.CloudServer{}).ID
	_, inst, ctx := mustCloud(t, sim.Env(sim.URL()))
	if _, err := inst.InstanceByID(ctx, id); err != nil {
		t.Fatal(err)
	}
	before := sim.TokenRequests()
	remove := sim.Inject(gbsim.Fault{Op: "GET /1.0/servers/{id}", Status: http.StatusUnauthorized})
	for range 20 {
		if _, err := inst.InstanceByID(ctx, id); err == nil {
			t.Fatal("a lookup succeeded while the API refused every token")
		}
	}
	remove()
	if got := sim.TokenRequests() - before; got != 1 {
		t.Errorf("20 refused lookups made %d token requests, want 1 (then backing off)", got)
	}
	if _, err := inst.InstanceByID(ctx, id); err != nil {
		t.Fatalf("a lookup once the API accepts tokens again: %v", err)
	}
}

// TestSecretsNeverLogged runs the provider at -v=10, where the cloudapi
// transport logs every request with its headers and bodies, through
// rejected credentials, token requests, a token expiry and lookups, and
// expects no credential and no token in the log.
func TestSecretsNeverLogged(t *testing.T) {
	const (
		secret   = "client-secret-do-not-print"
		password = "password-do-not-print"
	)
	sim := gbsim.NewServer(t, gbsim.Options{ClientSecret: secret, Password: password})
	id := sim.AddServer(gbsim.CloudServer{}).ID
	var buf bytes.Buffer
	logger := textlogger.NewLogger(textlogger.NewConfig(textlogger.Verbosity(10), textlogger.Output(&buf)))
	ctx := klog.NewContext(t.Context(), logger)
	env := sim.Env(sim.URL())
	user := with(env, "BRIGHTBOX_CLIENT", "", "BRIGHTBOX_CLIENT_SECRET", "",
		"BRIGHTBOX_USER_NAME", gbsim.DefaultUsername, "BRIGHTBOX_PASSWORD", password)

	if _, err := newCloud(ctx, brightbox.New(), with(env, "BRIGHTBOX_CLIENT_SECRET", "wrong-"+secret), nil); err == nil {
		t.Fatal("NewCloud with a wrong secret succeeded")
	}
	for _, vars := range []map[string]string{env, user} {
		p := brightbox.New()
		if _, err := newCloud(ctx, p, vars, nil); err != nil {
			t.Fatalf("NewCloud: %v", err)
		}
		sim.ExpireTokens()
		if _, err := p.Instances().InstanceByID(ctx, id); err != nil {
			t.Fatalf("InstanceByID: %v", err)
		}
	}
	log := buf.String()
	if !strings.Contains(log, "/token/") {
		t.Fatalf("the log shows no token request; is it at -v=10?\n%s", log)
	}
	for _, s := range []string{secret, password, gbsim.DefaultAppSecret} {
		if strings.Contains(log, s) {
			t.Errorf("the log holds %q", s)
		}
	}
	if tok := simToken.FindString(log); tok != "" {
		t.Errorf("the log holds an access token: %s", tok)
	}
}

// simToken matches the access tokens gbsim issues: 40 hex digits.
var simToken = regexp.MustCompile(`\b[0-9a-f]{40}\b`)

// TestSecretRotation rotates the API client's secret in
// BRIGHTBOX_CLIENT_SECRET_FILE the way the kubelet updates a Secret volume
// and expects the very next token, and so the very next lookup, to use it.
func TestSecretRotation(t *testing.T) {
	frameworktest.RunSecretRotation(t, harness, "BRIGHTBOX_CLIENT_SECRET")
}

package digitalocean_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/klog/v2/textlogger"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/framework/cloudapi"
	"github.com/ccmkit/ccmkit/framework/config"
	"github.com/ccmkit/ccmkit/framework/frameworktest"
	"github.com/ccmkit/ccmkit/providers/digitalocean"
	"github.com/ccmkit/ccmkit/providers/digitalocean/dosim"
)

// newCloud runs what framework.Main runs at start-up for p: load the
// config from vars, Init, build the cloud.
func newCloud(t *testing.T, p framework.Provider, vars map[string]string) (*framework.Cloud, context.Context, error) {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	return newCloudCtx(ctx, p, vars)
}

// newCloudCtx is newCloud logging to ctx's logger.
func newCloudCtx(ctx context.Context, p framework.Provider, vars map[string]string) (*framework.Cloud, context.Context, error) {
	cloud, err := framework.NewCloud(ctx, p, &framework.Env{
		ClusterName: "test-cluster",
		LookupEnv: func(k string) (string, bool) {
			v, ok := vars[k]
			return v, ok
		},
		// One attempt each, so a fault is seen as is.
		CloudAPI:         cloudapi.Options{MaxRetries: -1, Timeout: time.Second},
		InstanceCacheTTL: -1,
	})
	return cloud, ctx, err
}

// mustCloud is newCloud that must succeed.
func mustCloud(t *testing.T, vars map[string]string) (*framework.Cloud, context.Context) {
	t.Helper()
	cloud, ctx, err := newCloud(t, digitalocean.New(), vars)
	if err != nil {
		t.Fatalf("NewCloud: %v", err)
	}
	return cloud, ctx
}

func TestConfigErrors(t *testing.T) {
	const token = "tok-do-not-print"
	frameworktest.RunStartupFailures(t, newProvider, []frameworktest.StartupFailure{
		{
			Name: "nothing set",
			Env:  map[string]string{},
			Want: []string{"DO_ACCESS_TOKEN: required"},
		},
		{
			Name: "empty token",
			Env:  map[string]string{"DO_ACCESS_TOKEN": "", "REGION": "nyc3"},
			Want: []string{"DO_ACCESS_TOKEN: required"},
		},
		{
			Name: "bad QPS",
			Env:  map[string]string{"DO_ACCESS_TOKEN": token, "DO_API_RATE_LIMIT_QPS": "fast"},
			Want: []string{"DO_API_RATE_LIMIT_QPS"},
		},
		{
			Name: "negative QPS",
			Env:  map[string]string{"DO_ACCESS_TOKEN": token, "DO_API_RATE_LIMIT_QPS": "-1"},
			Want: []string{"DO_API_RATE_LIMIT_QPS: must not be negative"},
		},
		{
			Name: "unknown LB type",
			Env:  map[string]string{"DO_ACCESS_TOKEN": token, "DEFAULT_LB_TYPE": "GLOBALISH"},
			Want: []string{`DEFAULT_LB_TYPE: "GLOBALISH" is not REGIONAL or REGIONAL_NETWORK`},
		},
		{
			Name: "LB droplet tag not a tag",
			Env:  map[string]string{"DO_ACCESS_TOKEN": token, "DO_LB_DROPLET_TAG": "lb nodes!"},
			Want: []string{`DO_LB_DROPLET_TAG: "lb nodes!" is not a DigitalOcean tag`},
		},
		{
			Name: "LB droplet tag is the cluster's",
			Env:  map[string]string{"DO_ACCESS_TOKEN": token, "DO_CLUSTER_ID": "c0ffee", "DO_LB_DROPLET_TAG": "K8S:c0ffee"},
			Want: []string{"DO_LB_DROPLET_TAG: K8S:c0ffee is the cluster's own tag (DO_CLUSTER_ID)"},
		},
		{
			Name: "LB droplet tag is the firewall's",
			Env: map[string]string{"DO_ACCESS_TOKEN": token, "DO_LB_DROPLET_TAG": "workers",
				"PUBLIC_ACCESS_FIREWALL_NAME": "fw", "PUBLIC_ACCESS_FIREWALL_TAGS": "k8s,workers"},
			Want: []string{"DO_LB_DROPLET_TAG: workers is a tag of the public-access firewall"},
		},
		{
			Name: "LB droplet tag is DOKS's",
			Env:  map[string]string{"DO_ACCESS_TOKEN": token, "DO_LB_DROPLET_TAG": "k8s:worker"},
			Want: []string{"DO_LB_DROPLET_TAG: k8s:worker is a tag DigitalOcean Kubernetes puts on every worker droplet"},
		},
		{
			Name: "override URL not http",
			Env:  map[string]string{"DO_ACCESS_TOKEN": token, "DO_OVERRIDE_URL": "ftp://files.example"},
			Want: []string{"DO_OVERRIDE_URL: ftp://files.example is not an http(s) URL"},
		},
		{
			Name: "token twice",
			Env:  map[string]string{"DO_ACCESS_TOKEN": token, "DO_ACCESS_TOKEN_FILE": "/nonexistent"},
			Want: []string{"DO_ACCESS_TOKEN and DO_ACCESS_TOKEN_FILE are both set"},
		},
		{
			Name: "token file missing",
			Env:  map[string]string{"DO_ACCESS_TOKEN_FILE": "/nonexistent/token"},
			Want: []string{"DO_ACCESS_TOKEN_FILE", "/nonexistent/token"},
		},
		{
			Name: "validation waits for the required token",
			Env:  map[string]string{"DO_API_RATE_LIMIT_QPS": "-2", "DEFAULT_LB_TYPE": "x"},
			// Validate runs only when the tags passed, so the required
			// token is what is reported.
			Want: []string{"DO_ACCESS_TOKEN: required"},
		},
	})
}

func TestInitChecksAccess(t *testing.T) {
	sim := dosim.NewServer(t, dosim.Options{Token: "the-right-token"})
	down := httptest.NewServer(http.NotFoundHandler())
	down.Close()
	htmlProxy := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(htmlProxy.Close)
	env := func(url, token string) map[string]string {
		return map[string]string{"DO_OVERRIDE_URL": url, "DO_ACCESS_TOKEN": token, "REGION": "nyc3"}
	}
	frameworktest.RunStartupFailures(t, newProvider, []frameworktest.StartupFailure{
		{Name: "wrong token", Env: env(sim.URL(), "a-wrong-token"), Want: []string{"rejected the token", "DO_ACCESS_TOKEN"}},
		{Name: "unreachable API", Env: env(down.URL, "the-right-token"), Want: []string{"cannot use the DigitalOcean API", "DO_OVERRIDE_URL"}},
		{Name: "not the API", Env: env(htmlProxy.URL, "the-right-token"), Want: []string{"cannot use the DigitalOcean API", "DO_OVERRIDE_URL"}},
	})
}

func newProvider() framework.Provider { return digitalocean.New() }

// TestRegion checks where the region comes from: REGION, else the droplet
// metadata service, else a start-up error naming REGION.
func TestRegion(t *testing.T) {
	// A droplet the API names no region for: the configured one applies.
	api := newRawAPI(t, map[string]rawResponse{
		"GET /v2/droplets/1": {body: `{"droplet":{"id":1,"name":"node-1","status":"active","size_slug":"s-1vcpu-1gb","networks":{"v4":[{"ip_address":"192.0.2.1","type":"public"}]}}}`},
	})

	metadata := func(status int, body string) string {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") != "" {
				t.Error("the metadata service was sent an Authorization header")
			}
			w.WriteHeader(status)
			fmt.Fprint(w, body)
		}))
		t.Cleanup(srv.Close)
		return srv.URL + "/metadata/v1/region"
	}
	down := httptest.NewServer(http.NotFoundHandler())
	down.Close()

	tests := []struct {
		name        string
		region      string
		metadataURL string
		want        string
		wantErr     string
	}{
		{name: "REGION wins", region: "sfo3", metadataURL: metadata(200, "ams3\n"), want: "sfo3"},
		{name: "REGION the API does not know", region: "sfo9", wantErr: `REGION: "sfo9" is not a DigitalOcean region (the API lists nyc3, sfo3)`},
		{name: "from metadata", metadataURL: metadata(200, "ams3\n"), want: "ams3"},
		{name: "metadata unreachable", metadataURL: down.URL, wantErr: "REGION is not set"},
		{name: "metadata 404", metadataURL: metadata(404, "nope"), wantErr: "REGION is not set"},
		{name: "metadata garbage", metadataURL: metadata(200, "<html>hi</html>"), wantErr: "not a region slug"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vars := api.Env()
			vars["REGION"] = tt.region
			cloud, ctx, err := newCloud(t, digitalocean.NewWithMetadataURL(tt.metadataURL), vars)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("NewCloud error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("NewCloud: %v", err)
			}
			inst, err := cloud.Provider().(framework.InstancesProvider).Instances().InstanceByID(ctx, "1")
			if err != nil {
				t.Fatalf("InstanceByID: %v", err)
			}
			if inst.Region != tt.want {
				t.Errorf("region = %q, want %q", inst.Region, tt.want)
			}
		})
	}
}

// TestTokenRotation rotates the token in DO_ACCESS_TOKEN_FILE the way the
// kubelet updates a Secret volume and expects the very next request to use
// it, with no restart.
func TestTokenRotation(t *testing.T) {
	frameworktest.RunSecretRotation(t, harness, "DO_ACCESS_TOKEN")
}

// TestTokenNeverLogged runs the provider at -v=10, where the cloudapi
// transport logs every request with its headers and bodies, through a
// rejected token, lookups and a not-found, and expects the token nowhere in
// the log.
func TestTokenNeverLogged(t *testing.T) {
	sim := dosim.NewServer(t, dosim.Options{Token: "the-token-do-not-print"})
	id := sim.Cloud().AddInstance("node-1")
	var buf bytes.Buffer
	logger := textlogger.NewLogger(textlogger.NewConfig(textlogger.Verbosity(10), textlogger.Output(&buf)))
	ctx := klog.NewContext(t.Context(), logger)

	const wrong = "wrong-token-do-not-print"
	if _, _, err := newCloudCtx(ctx, digitalocean.New(), map[string]string{"DO_ACCESS_TOKEN": wrong, "DO_OVERRIDE_URL": sim.URL(), "REGION": "nyc3"}); err == nil {
		t.Fatal("NewCloud with a wrong token succeeded")
	}
	cloud, ctx, err := newCloudCtx(ctx, digitalocean.New(), sim.Env(sim.URL()))
	if err != nil {
		t.Fatalf("NewCloud: %v", err)
	}
	inst := cloud.Provider().(framework.InstancesProvider).Instances()
	if _, err := inst.InstanceByID(ctx, id); err != nil {
		t.Fatalf("InstanceByID: %v", err)
	}
	if _, err := inst.InstanceByName(ctx, "node-1"); err != nil {
		t.Fatalf("InstanceByName: %v", err)
	}
	if _, err := inst.InstanceByID(ctx, "999999"); !framework.IsNotFound(err) {
		t.Fatalf("InstanceByID(missing) = %v, want not found", err)
	}

	log := buf.String()
	if !strings.Contains(log, "/v2/droplets") {
		t.Fatalf("the log shows no API request; is -v=10 on?\n%s", log)
	}
	for _, secret := range []string{sim.Token(), wrong} {
		if strings.Contains(log, secret) {
			t.Errorf("the log reveals token %q:\n%s", secret, log)
		}
	}
}

// TestConfigTags pins the settings: they are the existing CCM's, and a
// manifest written for it must keep working.
func TestConfigTags(t *testing.T) {
	frameworktest.CheckSettings(t, digitalocean.New(), []string{
		`DO_ACCESS_TOKEN secret required=true default=""`,
		`DO_OVERRIDE_URL string required=false default=""`,
		`DO_CLUSTER_ID string required=false default=""`,
		`DO_CLUSTER_VPC_ID string required=false default=""`,
		`REGION string required=false default=""`,
		`DO_API_RATE_LIMIT_QPS float64 required=false default="0"`,
		`DEFAULT_LB_TYPE string required=false default="REGIONAL_NETWORK"`,
		`PUBLIC_ACCESS_FIREWALL_NAME string required=false default=""`,
		`PUBLIC_ACCESS_FIREWALL_TAGS []string required=false default=""`,
		`DO_LB_DROPLET_TAG string required=false default=""`,
	})
}

// TestConfigValues checks every variable lands in Config, normalised.
func TestConfigValues(t *testing.T) {
	sim := dosim.NewServer(t, dosim.Options{})
	p := digitalocean.New()
	_, _, err := newCloud(t, p, map[string]string{
		"DO_ACCESS_TOKEN":             sim.Token(),
		"DO_OVERRIDE_URL":             sim.URL(),
		"DO_CLUSTER_ID":               "c-1",
		"DO_CLUSTER_VPC_ID":           "vpc-1",
		"REGION":                      "nyc3",
		"DO_API_RATE_LIMIT_QPS":       "2.5",
		"DEFAULT_LB_TYPE":             "regional",
		"PUBLIC_ACCESS_FIREWALL_NAME": "fw",
		"PUBLIC_ACCESS_FIREWALL_TAGS": "k8s,workers",
		"DO_LB_DROPLET_TAG":           "k8s:c-1:lb-nodes",
	})
	if err != nil {
		t.Fatalf("NewCloud: %v", err)
	}
	want := &digitalocean.Config{
		Token:                    config.NewSecret(sim.Token()),
		OverrideURL:              sim.URL(),
		ClusterID:                "c-1",
		ClusterVPCID:             "vpc-1",
		Region:                   "nyc3",
		APIQPS:                   2.5,
		DefaultLBType:            "REGIONAL",
		PublicAccessFirewallName: "fw",
		PublicAccessFirewallTags: []string{"k8s", "workers"},
		LBDropletTag:             "k8s:c-1:lb-nodes",
	}
	if diff := cmp.Diff(want, p.Config()); diff != "" {
		t.Errorf("Config (-want +got):\n%s", diff)
	}
}

package main

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// TestRunBrightbox serves the Brightbox example: the printed environment
// is the existing CCM's, and its credentials get a token that reads the
// servers and the load balancer the scenario seeds.
func TestRunBrightbox(t *testing.T) {
	cs := startRun(t, "--scenario=../../examples/cloudsim/brightbox.yaml")
	u := cs.env["CLOUDSIM_URL"]
	wantEnv := map[string]string{
		"CLOUDSIM_URL":            u,
		"CLOUDSIM_PROVIDER":       "brightbox",
		"BRIGHTBOX_API_URL":       u,
		"BRIGHTBOX_CLIENT":        "cli-dsse2",
		"BRIGHTBOX_CLIENT_SECRET": "cloudsim-secret",
		"BRIGHTBOX_ACCOUNT":       "acc-43ks4",
	}
	if diff := cmp.Diff(wantEnv, cs.env); diff != "" {
		t.Fatalf("printed environment (-want +got):\n%s", diff)
	}

	token := brightboxToken(t, cs.env)
	var servers []struct{ Name, Status string }
	getJSON(t, u+"/1.0/servers?account_id=acc-43ks4", token, &servers)
	want := []struct{ Name, Status string }{{"worker-1", "active"}, {"worker-2", "active"}, {"worker-3", "inactive"}}
	if diff := cmp.Diff(want, servers); diff != "" {
		t.Errorf("servers (-want +got):\n%s", diff)
	}
	var lbs []struct {
		Name     string
		CloudIPs []struct{ ID string } `json:"cloud_ips"`
	}
	getJSON(t, u+"/1.0/load_balancers", token, &lbs)
	if len(lbs) != 1 || lbs[0].Name != "web.default.kubernetes" || len(lbs[0].CloudIPs) != 1 {
		t.Errorf("load balancers = %+v, want the existing CCM's with its cloud IP", lbs)
	}
}

// brightboxToken gets a bearer token with the printed credentials.
func brightboxToken(t *testing.T, env map[string]string) string {
	t.Helper()
	resp, err := http.PostForm(env["BRIGHTBOX_API_URL"]+"/token/", url.Values{"grant_type": {"client_credentials"},
		"client_id": {env["BRIGHTBOX_CLIENT"]}, "client_secret": {env["BRIGHTBOX_CLIENT_SECRET"]}})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&tok); err != nil || tok.AccessToken == "" {
		t.Fatalf("token: %s, %v", resp.Status, err)
	}
	return tok.AccessToken
}

// TestRunBrightboxDNS serves the Brightbox example with --dns: a cloud
// IP's names resolve, through Go's own resolver, to its address, as the
// existing Brightbox CCM checks before it builds a load balancer
// (brightbox/domain_resolution.go there).
func TestRunBrightboxDNS(t *testing.T) {
	cs := startRun(t, "--scenario=../../examples/cloudsim/brightbox.yaml", "--dns=127.0.0.1:0")
	dnsAddr := cs.env["CLOUDSIM_DNS"]
	if !strings.HasPrefix(dnsAddr, "127.0.0.1:") {
		t.Fatalf("CLOUDSIM_DNS = %q, want 127.0.0.1:<port>", dnsAddr)
	}
	var cips []struct {
		Fqdn       string `json:"fqdn"`
		ReverseDNS string `json:"reverse_dns"`
		PublicIPv4 string `json:"public_ipv4"`
	}
	getJSON(t, cs.env["BRIGHTBOX_API_URL"]+"/1.0/cloud_ips", brightboxToken(t, cs.env), &cips)
	if len(cips) == 0 {
		t.Fatal("no cloud IPs in the example")
	}
	r := resolverFor(dnsAddr, "udp")
	for _, name := range []string{cips[0].Fqdn, cips[0].ReverseDNS} {
		got, err := r.LookupHost(t.Context(), name)
		if err != nil || !slices.Contains(got, cips[0].PublicIPv4) {
			t.Errorf("LookupHost(%q) = %v, %v; want %s among them", name, got, err, cips[0].PublicIPv4)
		}
	}
}

// TestRunSettlesWithTime: a load balancer seeded creating goes active
// --settle-after later though no client reads it, as the real cloud's
// does; with --settle-after=0 it waits for reads.
func TestRunSettlesWithTime(t *testing.T) {
	scenario := writeScenario(t, `provider: brightbox
servers: [{name: worker-1}]
loadBalancers:
- name: lb
  status: creating
  listeners: [{protocol: http, in: 80, out: 31080}]
  healthcheck: {type: http, port: 31080}
  nodes: [worker-1]
`)
	status := func(cs *cloudsim) string {
		var st struct {
			LoadBalancers []struct{ Status string } `json:"load_balancers"`
		}
		getJSON(t, cs.env["CLOUDSIM_URL"]+"/_sim/state", "", &st)
		if len(st.LoadBalancers) != 1 {
			t.Fatalf("load balancers in the state: %+v", st.LoadBalancers)
		}
		return st.LoadBalancers[0].Status
	}

	still := startRun(t, "--scenario="+scenario, "--settle-after=0")
	timed := startRun(t, "--scenario="+scenario, "--settle-after=50ms")
	simkit.WaitFor(t, "the unread load balancer to go active", func() bool { return status(timed) == "active" })
	if got := status(still); got != "creating" {
		t.Errorf("with --settle-after=0, an unread load balancer is %q, want creating", got)
	}
}

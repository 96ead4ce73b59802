package dosim

import (
	"net/http"
	"slices"
	"strings"
	"testing"
)

const testScenario = `
provider: digitalocean
token: scen-token
region: sfo3
pageSize: 2
provisioningReads: 1
droplets:
- name: node-1
  tags: [k8s-worker]
- name: node-2
  id: 4242
  status: "off"
  size: s-4vcpu-8gb
  privateIPv4: 10.9.0.2
  publicIPv4: none
certificates:
- id: cert-1
  name: web
  type: lets_encrypt
loadBalancers:
- name: legacy
  forwardingRules:
  - {entry_protocol: tcp, entry_port: 80, target_protocol: tcp, target_port: 30080}
  droplets: [node-1, node-2]
  tags: ["k8s:abc"]
faults:
- operation: droplets.get
  status: 503
  count: 1
`

func TestScenario(t *testing.T) {
	s, err := NewFromScenario([]byte(testScenario))
	if err != nil {
		t.Fatal(err)
	}
	s.Start()
	t.Cleanup(s.Close)
	if s.Env("u")["REGION"] != "sfo3" || s.Token() != "scen-token" {
		t.Errorf("env %v", s.Env("u"))
	}
	c := newClient(t, s, "scen-token", 0)
	_, _, err = c.Droplets.Get(ctx(), 4242)
	wantStatus(t, err, http.StatusServiceUnavailable)
	d, _, err := c.Droplets.Get(ctx(), 4242)
	if err != nil {
		t.Fatal(err)
	}
	priv, _ := d.PrivateIPv4()
	pub, _ := d.PublicIPv4()
	if d.Status != "off" || d.SizeSlug != "s-4vcpu-8gb" || priv != "10.9.0.2" || pub != "" || d.Region.Slug != "sfo3" {
		t.Errorf("droplet %+v", d)
	}
	ds, resp, err := c.Droplets.List(ctx(), nil)
	if err != nil || len(ds) != 2 || resp.Meta.Total != 2 {
		t.Errorf("list: %d %v", len(ds), err)
	}
	if cert, _, err := c.Certificates.Get(ctx(), "cert-1"); err != nil || cert.Type != "lets_encrypt" {
		t.Errorf("cert %+v %v", cert, err)
	}
	lbs := s.Cloud().LoadBalancers()
	if len(lbs) != 1 || lbs[0].Name != "legacy" || !slices.Equal(lbs[0].Members, []string{"100000001", "4242"}) {
		t.Errorf("lbs %+v", lbs)
	}
}

func TestScenarioErrors(t *testing.T) {
	_, err := LoadScenario([]byte(`
provider: aws
pageSize: 500
droplets:
- status: running
loadBalancers:
- droplets: [ghost]
faults:
- operation: nope
  status: 200
bogus: 1
`))
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{"provider", "pageSize", "droplets[0].name", "droplets[0].status", "loadBalancers[0].forwardingRules", "ghost", "faults[0].operation", "faults[0].status", "bogus"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not mention %s: %v", want, err)
		}
	}
}

func TestScenarioOperationsAreEndpoints(t *testing.T) {
	ops := New(Options{}).Operations()
	for name, op := range Operations {
		if !slices.Contains(ops, op) {
			t.Errorf("%s: %q is not an endpoint", name, op)
		}
	}
}

// TestScenarioTokens: a scenario registers several tokens of the team;
// the API takes each, the first is the one cloudsim prints, and a bad
// list is reported.
func TestScenarioTokens(t *testing.T) {
	s, err := NewFromScenario([]byte("provider: digitalocean\ntokens: [ccm-token, ro-token]\n"))
	if err != nil {
		t.Fatal(err)
	}
	s.Start()
	t.Cleanup(s.Close)
	if got := s.Env(s.URL())["DO_ACCESS_TOKEN"]; got != "ccm-token" {
		t.Errorf("DO_ACCESS_TOKEN = %q, want the first token", got)
	}
	for _, tok := range []string{"ccm-token", "ro-token"} {
		if _, _, err := newClient(t, s, tok, 0).Account.Get(ctx()); err != nil {
			t.Errorf("token %s: %v", tok, err)
		}
	}
	_, _, err = newClient(t, s, DefaultToken, 0).Account.Get(ctx())
	wantStatus(t, err, http.StatusUnauthorized)
	s.SetToken("rotated") // rotating the main token leaves the others valid
	if _, _, err := newClient(t, s, "ro-token", 0).Account.Get(ctx()); err != nil {
		t.Errorf("ro-token after SetToken: %v", err)
	}

	s2, err := NewFromScenario([]byte("provider: digitalocean\ntoken: main\ntokens: [extra]\n"))
	if err != nil || s2.Token() != "main" {
		t.Fatalf("token and tokens: %v %v", s2, err)
	}
	_, err = LoadScenario([]byte("provider: digitalocean\ntoken: a\ntokens: [a, \"\"]\ndroplets:\n- {name: x, size: s-99vcpu}\n"))
	for _, want := range []string{"tokens[0]", "tokens[1]", "droplets[0].size"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error does not mention %s: %v", want, err)
		}
	}
}

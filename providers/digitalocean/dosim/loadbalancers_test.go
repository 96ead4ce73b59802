package dosim

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/digitalocean/godo"
)

// lbReq is a valid create request for droplets.
func lbReq(droplets ...int) *godo.LoadBalancerRequest {
	return &godo.LoadBalancerRequest{
		Name:   "a1b2c3",
		Region: "nyc3",
		Type:   "REGIONAL_NETWORK",
		ForwardingRules: []godo.ForwardingRule{
			{EntryProtocol: "tcp", EntryPort: 80, TargetProtocol: "tcp", TargetPort: 30080},
		},
		HealthCheck: &godo.HealthCheck{Protocol: "http", Port: 10256, Path: "/healthz", CheckIntervalSeconds: 3,
			ResponseTimeoutSeconds: 5, HealthyThreshold: 5, UnhealthyThreshold: 3},
		DropletIDs: droplets,
		Tags:       []string{"k8s:cluster-1"},
	}
}

func TestLoadBalancerLifecycle(t *testing.T) {
	s, c := setup(t, Options{})
	d := s.AddDroplet(Droplet{Name: "n1"}).ID
	lb, resp, err := c.LoadBalancers.Create(ctx(), lbReq(d))
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusAccepted || lb.Status != "new" || lb.IP != "" || lb.ID == "" {
		t.Fatalf("created %d %+v", resp.StatusCode, lb)
	}
	if lb.Region.Slug != "nyc3" || lb.Type != "REGIONAL_NETWORK" || lb.HealthCheck.Port != 10256 ||
		len(lb.DropletIDs) != 1 || lb.StickySessions.Type != "none" || lb.SizeUnit != 1 || lb.Tags[0] != "k8s:cluster-1" {
		t.Errorf("created %+v", lb)
	}
	got, _, err := c.LoadBalancers.Get(ctx(), lb.ID)
	if err != nil || got.Status != "new" {
		t.Fatalf("first GET: %+v %v", got, err)
	}
	got, _, err = c.LoadBalancers.Get(ctx(), lb.ID)
	if err != nil || got.Status != "active" || got.IP == "" || got.IPv6 != "" {
		t.Fatalf("second GET: %+v %v", got, err)
	}

	// PUT replaces the whole spec.
	upd := lbReq()
	upd.Tag = "k8s-nodes"
	upd.ForwardingRules = []godo.ForwardingRule{{EntryProtocol: "udp", EntryPort: 53, TargetProtocol: "udp", TargetPort: 30053}}
	upd.HealthCheck = &godo.HealthCheck{Protocol: "tcp", Port: 10256}
	upd.StickySessions = &godo.StickySessions{Type: "cookies", CookieName: "c", CookieTtlSeconds: 60}
	upd.EnableProxyProtocol = true
	upd.HTTPIdleTimeoutSeconds = godo.PtrTo(uint64(120))
	upd.Firewall = &godo.LBFirewall{Allow: []string{"cidr:10.0.0.0/8"}, Deny: []string{"ip:1.2.3.4"}}
	got, resp, err = c.LoadBalancers.Update(ctx(), lb.ID, upd)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatal(err)
	}
	if got.Status != "active" || got.IP == "" || len(got.DropletIDs) != 0 || got.Tag != "k8s-nodes" ||
		len(got.ForwardingRules) != 1 || got.ForwardingRules[0].EntryPort != 53 || got.HealthCheck.Path != "" ||
		got.StickySessions.CookieName != "c" || !got.EnableProxyProtocol || *got.HTTPIdleTimeoutSeconds != 120 ||
		got.Firewall.Deny[0] != "ip:1.2.3.4" {
		t.Errorf("after PUT: %+v", got)
	}
	// And again with the original: nothing of the update survives.
	got, _, _ = c.LoadBalancers.Update(ctx(), lb.ID, lbReq(d))
	if got.Tag != "" || got.EnableProxyProtocol || got.Firewall != nil || got.StickySessions.Type != "none" || len(got.DropletIDs) != 1 {
		t.Errorf("after second PUT: %+v", got)
	}

	writes := s.Writes()
	if _, err := c.LoadBalancers.Delete(ctx(), lb.ID); err != nil {
		t.Fatal(err)
	}
	if s.Writes() != writes+1 {
		t.Errorf("writes %d -> %d", writes, s.Writes())
	}
	_, _, err = c.LoadBalancers.Get(ctx(), lb.ID)
	wantStatus(t, err, 404)
	_, err = c.LoadBalancers.Delete(ctx(), lb.ID)
	wantStatus(t, err, 404)
	_, _, err = c.LoadBalancers.Update(ctx(), lb.ID, lbReq(d))
	wantStatus(t, err, 404)
}

func TestLoadBalancerAdvanceDualstackErrored(t *testing.T) {
	s, c := setup(t, Options{ProvisioningReads: 100})
	req := lbReq()
	req.NetworkStack = "DUALSTACK"
	lb, _, err := c.LoadBalancers.Create(ctx(), req)
	if err != nil {
		t.Fatal(err)
	}
	s.Cloud().Advance()
	got, _, _ := c.LoadBalancers.Get(ctx(), lb.ID)
	if got.Status != "active" || got.IP == "" || got.IPv6 == "" {
		t.Errorf("after Advance: %+v", got)
	}
	s.SetLoadBalancerStatus(lb.ID, LBStatusErrored)
	if got, _, _ = c.LoadBalancers.Get(ctx(), lb.ID); got.Status != "errored" {
		t.Errorf("status = %q", got.Status)
	}

	s2, c2 := setup(t, Options{ProvisioningReads: -1})
	_ = s2
	if lb, _, _ := c2.LoadBalancers.Create(ctx(), lbReq()); lb.Status != "active" || lb.IP == "" {
		t.Errorf("ProvisioningReads<0: %+v", lb)
	}
}

func TestLoadBalancerList(t *testing.T) {
	s, c := setup(t, Options{})
	var ids []string
	for _, name := range []string{"a", "b", "c", "d", "e"} {
		req := lbReq()
		req.Name = name
		lb, _, err := c.LoadBalancers.Create(ctx(), req)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, lb.ID)
	}
	lbs, resp, err := c.LoadBalancers.List(ctx(), &godo.ListOptions{Page: 2, PerPage: 2})
	if err != nil || len(lbs) != 2 || lbs[0].Name != "c" || resp.Meta.Total != 5 || resp.Links.Pages.Prev == "" || resp.Links.Pages.Next == "" {
		t.Errorf("page 2: %v links %+v err %v", lbs, resp.Links, err)
	}
	lbs, _, err = c.LoadBalancers.ListByNames(ctx(), []string{"b", "e"}, nil)
	if err != nil || len(lbs) != 2 || lbs[1].Name != "e" {
		t.Errorf("by names: %v %v", lbs, err)
	}
	lbs, _, err = c.LoadBalancers.ListByUUIDs(ctx(), []string{ids[3]}, nil)
	if err != nil || len(lbs) != 1 || lbs[0].Name != "d" {
		t.Errorf("by uuids: %v %v", lbs, err)
	}
	// Listing counts as a read: two lists make every LB active.
	_, _, _ = c.LoadBalancers.List(ctx(), nil)
	lbs, _, _ = c.LoadBalancers.List(ctx(), nil)
	for _, lb := range lbs {
		if lb.Status != "active" {
			t.Errorf("%s is %s after two reads", lb.Name, lb.Status)
		}
	}
	if len(s.LoadBalancers()) != 5 {
		t.Error("LoadBalancers() size")
	}
}

func TestLoadBalancerValidation(t *testing.T) {
	s, c := setup(t, Options{})
	d := s.AddDroplet(Droplet{}).ID
	cert := s.AddCertificate(Certificate{Name: "web"}).ID
	cases := map[string]func(r *godo.LoadBalancerRequest){
		"no region":          func(r *godo.LoadBalancerRequest) { r.Region = "" },
		"unknown region":     func(r *godo.LoadBalancerRequest) { r.Region = "mars1" },
		"no rules":           func(r *godo.LoadBalancerRequest) { r.ForwardingRules = nil },
		"size and size_unit": func(r *godo.LoadBalancerRequest) { r.SizeSlug, r.SizeUnit = "lb-small", 2 },
		"bad size":           func(r *godo.LoadBalancerRequest) { r.SizeSlug = "lb-huge" },
		"unknown droplet":    func(r *godo.LoadBalancerRequest) { r.DropletIDs = []int{d, 999} },
		"tag and droplets":   func(r *godo.LoadBalancerRequest) { r.Tag = "x" },
		"bad tag":            func(r *godo.LoadBalancerRequest) { r.DropletIDs, r.Tag = nil, "lb nodes" },
		"udp health check port": func(r *godo.LoadBalancerRequest) {
			r.ForwardingRules = []godo.ForwardingRule{{EntryProtocol: "udp", EntryPort: 53, TargetProtocol: "udp", TargetPort: 30053}}
			r.HealthCheck = &godo.HealthCheck{Protocol: "tcp", Port: 30053}
		},
		"duplicate entry port": func(r *godo.LoadBalancerRequest) {
			r.ForwardingRules = append(r.ForwardingRules, godo.ForwardingRule{EntryProtocol: "http", EntryPort: 80, TargetProtocol: "http", TargetPort: 30081})
		},
		"https without certificate": func(r *godo.LoadBalancerRequest) {
			r.ForwardingRules[0] = godo.ForwardingRule{EntryProtocol: "https", EntryPort: 443, TargetProtocol: "http", TargetPort: 30080}
		},
		"unknown certificate": func(r *godo.LoadBalancerRequest) {
			r.ForwardingRules[0] = godo.ForwardingRule{EntryProtocol: "https", EntryPort: 443, TargetProtocol: "http", TargetPort: 30080, CertificateID: "nope"}
		},
		"passthrough with certificate": func(r *godo.LoadBalancerRequest) {
			r.ForwardingRules[0] = godo.ForwardingRule{EntryProtocol: "https", EntryPort: 443, TargetProtocol: "https", TargetPort: 30443, CertificateID: cert, TlsPassthrough: true}
		},
		"bad protocol":      func(r *godo.LoadBalancerRequest) { r.ForwardingRules[0].EntryProtocol = "sctp" },
		"bad port":          func(r *godo.LoadBalancerRequest) { r.ForwardingRules[0].TargetPort = 70000 },
		"bad interval":      func(r *godo.LoadBalancerRequest) { r.HealthCheck.CheckIntervalSeconds = 1 },
		"bad threshold":     func(r *godo.LoadBalancerRequest) { r.HealthCheck.HealthyThreshold = 11 },
		"bad hc protocol":   func(r *godo.LoadBalancerRequest) { r.HealthCheck.Protocol = "udp" },
		"bad sticky":        func(r *godo.LoadBalancerRequest) { r.StickySessions = &godo.StickySessions{Type: "cookies"} },
		"bad idle timeout":  func(r *godo.LoadBalancerRequest) { r.HTTPIdleTimeoutSeconds = godo.PtrTo(uint64(5)) },
		"bad firewall":      func(r *godo.LoadBalancerRequest) { r.Firewall = &godo.LBFirewall{Allow: []string{"10.0.0.0/8"}} },
		"bad type":          func(r *godo.LoadBalancerRequest) { r.Type = "LOCAL" },
		"bad network":       func(r *godo.LoadBalancerRequest) { r.Network = "PRIVATE" },
		"bad network stack": func(r *godo.LoadBalancerRequest) { r.NetworkStack = "IPV6" },
	}
	good, _, err := c.LoadBalancers.Create(ctx(), lbReq(d))
	if err != nil {
		t.Fatal(err)
	}
	writes := len(s.LoadBalancers())
	for name, mutate := range cases {
		t.Run(name, func(t *testing.T) {
			req := lbReq(d)
			mutate(req)
			_, _, err := c.LoadBalancers.Create(ctx(), req)
			er := errorResponse(t, err, http.StatusUnprocessableEntity)
			if er.Message == "" {
				t.Error("empty message")
			}
			_, _, err = c.LoadBalancers.Update(ctx(), good.ID, req)
			wantStatus(t, err, http.StatusUnprocessableEntity)
		})
	}
	if len(s.LoadBalancers()) != writes {
		t.Error("a rejected request created a load balancer")
	}
	// Valid variants.
	ok := map[string]func(r *godo.LoadBalancerRequest){
		"tls passthrough": func(r *godo.LoadBalancerRequest) {
			r.ForwardingRules[0] = godo.ForwardingRule{EntryProtocol: "https", EntryPort: 443, TargetProtocol: "https", TargetPort: 30443, TlsPassthrough: true}
		},
		"https with certificate": func(r *godo.LoadBalancerRequest) {
			r.ForwardingRules[0] = godo.ForwardingRule{EntryProtocol: "https", EntryPort: 443, TargetProtocol: "http", TargetPort: 30080, CertificateID: cert}
			r.RedirectHttpToHttps = true
		},
		"tcp and udp on one port": func(r *godo.LoadBalancerRequest) {
			r.ForwardingRules = append(r.ForwardingRules, godo.ForwardingRule{EntryProtocol: "udp", EntryPort: 80, TargetProtocol: "udp", TargetPort: 30081})
		},
		"size slug":  func(r *godo.LoadBalancerRequest) { r.SizeSlug = "lb-medium" },
		"size unit":  func(r *godo.LoadBalancerRequest) { r.SizeUnit = 3 },
		"internal":   func(r *godo.LoadBalancerRequest) { r.Network = "INTERNAL" },
		"keepalive":  func(r *godo.LoadBalancerRequest) { r.EnableBackendKeepalive = true },
		"no le dns":  func(r *godo.LoadBalancerRequest) { r.DisableLetsEncryptDNSRecords = godo.PtrTo(true) },
		"hc proxy":   func(r *godo.LoadBalancerRequest) { r.HealthCheck.ProxyProtocol = godo.PtrTo(true) },
		"tag member": func(r *godo.LoadBalancerRequest) { r.DropletIDs, r.Tag = nil, "k8s" },
	}
	for name, mutate := range ok {
		req := lbReq(d)
		mutate(req)
		lb, _, err := c.LoadBalancers.Create(ctx(), req)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if name == "size slug" && (lb.SizeSlug != "lb-medium" || lb.SizeUnit != 0) {
			t.Errorf("size: %q %d", lb.SizeSlug, lb.SizeUnit)
		}
		if name == "hc proxy" && (lb.HealthCheck.ProxyProtocol == nil || !*lb.HealthCheck.ProxyProtocol) {
			t.Error("health_check.proxy_protocol lost")
		}
		if name == "no le dns" && !*lb.DisableLetsEncryptDNSRecords {
			t.Error("disable_lets_encrypt_dns_records lost")
		}
	}
}

func TestLoadBalancerBadJSON(t *testing.T) {
	s, _ := setup(t, Options{})
	req, _ := http.NewRequest(http.MethodPost, s.URL()+"/v2/load_balancers", strings.NewReader("{"))
	req.Header.Set("Authorization", "Bearer "+s.Token())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("status %d", resp.StatusCode)
	}
}

func TestAddLoadBalancer(t *testing.T) {
	s, c := setup(t, Options{})
	pre := s.AddLoadBalancer(LoadBalancer{Name: "legacy", ForwardingRules: []ForwardingRule{{EntryProtocol: "tcp", EntryPort: 80, TargetProtocol: "tcp", TargetPort: 31000}}})
	got, _, err := c.LoadBalancers.Get(ctx(), pre.ID)
	if err != nil || got.Status != "active" || got.IP == "" || got.Name != "legacy" {
		t.Errorf("%+v %v", got, err)
	}
}

func TestLoadBalancerSubresources(t *testing.T) {
	s, c := setup(t, Options{})
	d1, d2 := s.AddDroplet(Droplet{}).ID, s.AddDroplet(Droplet{}).ID
	lb, _, err := c.LoadBalancers.Create(ctx(), lbReq(d1))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.LoadBalancers.AddDroplets(ctx(), lb.ID, d2); err != nil {
		t.Fatal(err)
	}
	_, err = c.LoadBalancers.AddDroplets(ctx(), lb.ID, 7)
	wantStatus(t, err, 422)
	if _, err := c.LoadBalancers.RemoveDroplets(ctx(), lb.ID, d1); err != nil {
		t.Fatal(err)
	}
	rule := godo.ForwardingRule{EntryProtocol: "tcp", EntryPort: 443, TargetProtocol: "tcp", TargetPort: 30443}
	if _, err := c.LoadBalancers.AddForwardingRules(ctx(), lb.ID, rule); err != nil {
		t.Fatal(err)
	}
	_, err = c.LoadBalancers.AddForwardingRules(ctx(), lb.ID, rule)
	wantStatus(t, err, 422) // duplicate entry port
	if _, err := c.LoadBalancers.RemoveForwardingRules(ctx(), lb.ID, lbReq().ForwardingRules...); err != nil {
		t.Fatal(err)
	}
	_, err = c.LoadBalancers.RemoveForwardingRules(ctx(), lb.ID, rule)
	wantStatus(t, err, 422) // no rule left
	got, _, _ := c.LoadBalancers.Get(ctx(), lb.ID)
	if len(got.DropletIDs) != 1 || got.DropletIDs[0] != d2 || len(got.ForwardingRules) != 1 || got.ForwardingRules[0].EntryPort != 443 {
		t.Errorf("after sub-resource calls: %+v", got)
	}
}

// TestTagLoadBalancerDropletIDs: a load balancer that targets droplets by
// tag answers, in droplet_ids, the droplets carrying the tag now (openapi
// specification/resources/load_balancers/responses/examples.yml: "tag:
// prod:web" with its droplet_ids), on create, get, list and update.
func TestTagLoadBalancerDropletIDs(t *testing.T) {
	s, c := setup(t, Options{ProvisioningReads: -1})
	a := s.AddDroplet(Droplet{Tags: []string{"web"}}).ID
	s.AddDroplet(Droplet{})
	req := lbReq()
	req.Tag = "web"
	lb, _, err := c.LoadBalancers.Create(ctx(), req)
	if err != nil || lb.Tag != "web" || !slices.Equal(lb.DropletIDs, []int{a}) {
		t.Fatalf("created: tag %q droplet_ids %v, %v; want [%d]", lb.Tag, lb.DropletIDs, err, a)
	}
	b := s.AddDroplet(Droplet{Tags: []string{"web"}}).ID
	got, _, err := c.LoadBalancers.Get(ctx(), lb.ID)
	if err != nil || !slices.Equal(got.DropletIDs, []int{a, b}) {
		t.Errorf("after tagging another droplet: %v %v; want [%d %d]", got.DropletIDs, err, a, b)
	}
	if _, err := c.Tags.UntagResources(ctx(), "web", &godo.UntagResourcesRequest{
		Resources: []godo.Resource{{ID: strconv.Itoa(a), Type: godo.DropletResourceType}},
	}); err != nil {
		t.Fatal(err)
	}
	lbs, _, err := c.LoadBalancers.List(ctx(), nil)
	if err != nil || len(lbs) != 1 || !slices.Equal(lbs[0].DropletIDs, []int{b}) {
		t.Errorf("list after untagging: %+v %v", lbs, err)
	}
	got, _, err = c.LoadBalancers.Update(ctx(), lb.ID, req)
	if err != nil || !slices.Equal(got.DropletIDs, []int{b}) {
		t.Errorf("update: %v %v", got.DropletIDs, err)
	}
	if st := s.State(); !slices.Equal(st.LoadBalancers[0].DropletIDs, []int{b}) {
		t.Errorf("state: %v", st.LoadBalancers[0].DropletIDs)
	}
}

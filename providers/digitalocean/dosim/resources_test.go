package dosim

import (
	"net/http"
	"strconv"
	"testing"

	"github.com/digitalocean/godo"
)

func TestCertificates(t *testing.T) {
	s, c := setup(t, Options{})
	a := s.AddCertificate(Certificate{Name: "web", Type: "lets_encrypt", DNSNames: []string{"example.com"}})
	s.AddCertificate(Certificate{Name: "other"})
	got, _, err := c.Certificates.Get(ctx(), a.ID)
	if err != nil || got.Name != "web" || got.Type != "lets_encrypt" || got.State != "verified" || got.DNSNames[0] != "example.com" {
		t.Errorf("%+v %v", got, err)
	}
	_, _, err = c.Certificates.Get(ctx(), "nope")
	wantStatus(t, err, 404)
	certs, _, err := c.Certificates.ListByName(ctx(), "web", nil)
	if err != nil || len(certs) != 1 || certs[0].ID != a.ID {
		t.Errorf("by name: %+v %v", certs, err)
	}
	certs, _, err = c.Certificates.List(ctx(), nil)
	if err != nil || len(certs) != 2 {
		t.Errorf("list: %+v %v", certs, err)
	}
	s.DeleteCertificate(a.ID)
	_, _, err = c.Certificates.Get(ctx(), a.ID)
	wantStatus(t, err, 404)
}

func TestTags(t *testing.T) {
	s, c := setup(t, Options{})
	d := s.AddDroplet(Droplet{}).ID
	lb, _, err := c.LoadBalancers.Create(ctx(), lbReq())
	if err != nil {
		t.Fatal(err)
	}
	tag, resp, err := c.Tags.Create(ctx(), &godo.TagCreateRequest{Name: "k8s:abc"})
	if err != nil || resp.StatusCode != http.StatusCreated || tag.Name != "k8s:abc" {
		t.Fatalf("%+v %v", tag, err)
	}
	_, _, err = c.Tags.Create(ctx(), &godo.TagCreateRequest{Name: "bad tag!"})
	wantStatus(t, err, 422)

	_, err = c.Tags.TagResources(ctx(), "k8s:abc", &godo.TagResourcesRequest{Resources: []godo.Resource{
		{ID: lb.ID, Type: godo.LoadBalancerResourceType},
		{ID: strconv.Itoa(d), Type: godo.DropletResourceType},
	}})
	if err != nil {
		t.Fatal(err)
	}
	got, _, _ := c.LoadBalancers.Get(ctx(), lb.ID)
	if !contains(got.Tags, "k8s:abc") {
		t.Errorf("lb tags = %v", got.Tags)
	}
	ds, _, _ := c.Droplets.ListByTag(ctx(), "k8s:abc", nil)
	if len(ds) != 1 {
		t.Errorf("tagged droplets = %d", len(ds))
	}
	tg, _, err := c.Tags.Get(ctx(), "k8s:abc")
	if err != nil || tg.Resources.Count != 2 {
		t.Errorf("tag = %+v %v", tg, err)
	}

	_, err = c.Tags.TagResources(ctx(), "missing", &godo.TagResourcesRequest{Resources: []godo.Resource{{ID: lb.ID, Type: godo.LoadBalancerResourceType}}})
	wantStatus(t, err, 404)
	_, err = c.Tags.TagResources(ctx(), "k8s:abc", &godo.TagResourcesRequest{Resources: []godo.Resource{{ID: "nope", Type: godo.LoadBalancerResourceType}}})
	wantStatus(t, err, 422)

	if _, err = c.Tags.UntagResources(ctx(), "k8s:abc", &godo.UntagResourcesRequest{Resources: []godo.Resource{{ID: lb.ID, Type: godo.LoadBalancerResourceType}}}); err != nil {
		t.Fatal(err)
	}
	if got, _, _ = c.LoadBalancers.Get(ctx(), lb.ID); contains(got.Tags, "k8s:abc") {
		t.Errorf("untag left %v", got.Tags)
	}
	tags, _, err := c.Tags.List(ctx(), nil)
	if err != nil || len(tags) != 2 { // k8s:cluster-1 from lbReq, k8s:abc
		t.Errorf("tags = %+v %v", tags, err)
	}
	if _, err := c.Tags.Delete(ctx(), "k8s:abc"); err != nil {
		t.Fatal(err)
	}
	_, _, err = c.Tags.Get(ctx(), "k8s:abc")
	wantStatus(t, err, 404)
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

func TestFirewalls(t *testing.T) {
	s, c := setup(t, Options{})
	s.AddDroplet(Droplet{Tags: []string{"k8s:worker"}})
	req := &godo.FirewallRequest{
		Name: "k8s-public-access",
		Tags: []string{"k8s:worker"},
		InboundRules: []godo.InboundRule{
			{Protocol: "tcp", PortRange: "30000-32767", Sources: &godo.Sources{Addresses: []string{"0.0.0.0/0", "::/0"}}},
			{Protocol: "udp", PortRange: "30053", Sources: &godo.Sources{Addresses: []string{"0.0.0.0/0"}}},
		},
	}
	fw, _, err := c.Firewalls.Create(ctx(), req)
	if err != nil || fw.ID == "" || fw.Status != FirewallWaiting || len(fw.InboundRules) != 2 || fw.InboundRules[0].PortRange != "30000-32767" {
		t.Fatalf("%+v %v", fw, err)
	}
	got, _, err := c.Firewalls.Get(ctx(), fw.ID)
	if err != nil || got.Name != req.Name || got.Tags[0] != "k8s:worker" {
		t.Errorf("get: %+v %v", got, err)
	}
	req.InboundRules = req.InboundRules[:1]
	got, _, err = c.Firewalls.Update(ctx(), fw.ID, req)
	if err != nil || len(got.InboundRules) != 1 {
		t.Errorf("update: %+v %v", got, err)
	}
	fws, resp, err := c.Firewalls.List(ctx(), nil)
	if err != nil || len(fws) != 1 || resp.Meta.Total != 1 {
		t.Errorf("list: %+v %v", fws, err)
	}
	for name, bad := range map[string]*godo.FirewallRequest{
		"no name":     {Tags: req.Tags},
		"bad ports":   {Name: "x", InboundRules: []godo.InboundRule{{Protocol: "tcp", PortRange: "99999", Sources: &godo.Sources{Addresses: []string{"0.0.0.0/0"}}}}},
		"no sources":  {Name: "x", InboundRules: []godo.InboundRule{{Protocol: "tcp", PortRange: "80"}}},
		"bad proto":   {Name: "x", InboundRules: []godo.InboundRule{{Protocol: "sctp", PortRange: "80", Sources: &godo.Sources{Addresses: []string{"0.0.0.0/0"}}}}},
		"unknown tag": {Name: "x", Tags: []string{"nope"}},
	} {
		if _, _, err := c.Firewalls.Create(ctx(), bad); err == nil {
			t.Errorf("%s: accepted", name)
		} else {
			wantStatus(t, err, 422)
		}
	}
	if _, err := c.Firewalls.Delete(ctx(), fw.ID); err != nil {
		t.Fatal(err)
	}
	_, _, err = c.Firewalls.Get(ctx(), fw.ID)
	wantStatus(t, err, 404)
	if len(s.Firewalls()) != 0 {
		t.Error("Firewalls() after delete")
	}
}

package openstacksim

import (
	"net/http"
	"slices"
	"testing"

	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/attributestags"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
)

func TestNeutronTagsAPI(t *testing.T) {
	s, c := setup(t, Options{})
	netID := s.Defaults().NetworkID
	tags, err := attributestags.ReplaceAll(ctx(), c.network, "networks", netID, attributestags.ReplaceAllOpts{Tags: []string{"a", "b", "a"}}).Extract()
	if err != nil || !slices.Equal(tags, []string{"a", "b"}) {
		t.Fatalf("replace = %v, %v", tags, err)
	}
	if err := attributestags.Add(ctx(), c.network, "networks", netID, "c").ExtractErr(); err != nil {
		t.Fatal(err)
	}
	if err := attributestags.Delete(ctx(), c.network, "networks", netID, "a").ExtractErr(); err != nil {
		t.Fatal(err)
	}
	ok, err := attributestags.Confirm(ctx(), c.network, "networks", netID, "a").Extract()
	if err != nil || ok {
		t.Errorf("confirm deleted tag = %v, %v", ok, err)
	}
	wantNeutronError(t, attributestags.Delete(ctx(), c.network, "networks", netID, "a").ExtractErr(), http.StatusNotFound, "TagNotFound")

	// The tags are the network's: shown on it, filtered on, and each
	// change moved its revision on.
	n, err := networks.Get(ctx(), c.network, netID).Extract()
	if err != nil || !slices.Equal(n.Tags, []string{"b", "c"}) || n.RevisionNumber != 4 {
		t.Errorf("network tags %v revision %d (%v), want [b c] at 4", n.Tags, n.RevisionNumber, err)
	}
	pages, err := networks.List(c.network, networks.ListOpts{Tags: "b,c"}).AllPages(ctx())
	if err != nil {
		t.Fatal(err)
	}
	if list, _ := networks.ExtractNetworks(pages); len(list) != 1 || list[0].ID != netID {
		t.Errorf("tags=b,c lists %v", list)
	}
	if err := attributestags.DeleteAll(ctx(), c.network, "networks", netID).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	if tags, err := attributestags.List(ctx(), c.network, "networks", netID).Extract(); err != nil || len(tags) != 0 {
		t.Errorf("after delete all: %v, %v", tags, err)
	}
	_, err = attributestags.List(ctx(), c.network, "ports", "missing").Extract()
	wantNeutronError(t, err, http.StatusNotFound, "PortNotFound")
}

func TestOctaviaServesV2AsV2Dot0(t *testing.T) {
	s, c := setup(t, Options{})
	raw := rawClient{t: t, token: c.provider.TokenID}
	_, doc := raw.do("GET", s.URL()+"/load-balancer/", nil)
	if href := path(doc, "versions", 0, "links", 0, "href"); href != s.URL()+"/load-balancer/v2" {
		t.Errorf("version link = %v, want …/load-balancer/v2", href)
	}
	for _, p := range []string{"/load-balancer/v2", "/load-balancer/v2.0/", "/load-balancer/v2/lbaas"} {
		if status, body := raw.do("GET", s.URL()+p, nil); status != http.StatusOK || body != "v2" {
			t.Errorf("GET %s = %d %v, want 200 \"v2\"", p, status, body)
		}
	}
	status, body := raw.do("GET", s.URL()+"/load-balancer/v2/lbaas/loadbalancers", nil)
	if _, ok := path(body, "loadbalancers").([]any); status != http.StatusOK || !ok {
		t.Errorf("GET /v2/lbaas/loadbalancers = %d %v", status, body)
	}
	if n := s.Stats()["GET "+lbaas+"/loadbalancers"]; n != 1 {
		t.Errorf("counted as %d v2.0 list requests, want 1", n)
	}
}

func TestPortBindingHostIsAdminOnly(t *testing.T) {
	s, c := setup(t, Options{})
	v := s.AddServer(NovaServer{Name: "node-1"})
	raw := rawClient{t: t, token: c.provider.TokenID}
	portURL := s.URL() + networkV2 + "/ports/" + v.Ports[0].ID
	_, body := raw.do("GET", portURL, nil)
	if _, shown := path(body, "port").(map[string]any)["binding:host_id"]; shown || path(body, "port", "binding:vnic_type") != "normal" {
		t.Errorf("a member's port view: %v", body)
	}
	status, body := raw.do("PUT", portURL, map[string]any{"port": map[string]any{"binding:host_id": "compute-2"}})
	if status != http.StatusForbidden || path(body, "NeutronError", "type") != "PolicyNotAuthorized" {
		t.Errorf("setting binding:host_id: %d %v, want 403 PolicyNotAuthorized", status, body)
	}
	for _, p := range s.State().Ports {
		if p.ID == v.Ports[0].ID && p.BindingHostID != serverHost {
			t.Errorf("binding host = %q after a refused update", p.BindingHostID)
		}
	}
}

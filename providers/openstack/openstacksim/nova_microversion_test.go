package openstacksim

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/flavors"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/hypervisors"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/services"
	"github.com/gophercloud/gophercloud/v2/pagination"
)

func TestFlavorsFollowTheMicroversion(t *testing.T) {
	s, c := setup(t, Options{})
	s.AddFlavor(Flavor{ID: "gpu", Name: "g1.large", VCPUs: 8, RAM: 32768, Disk: 100, Swap: 512,
		Description: "with a GPU", ExtraSpecs: map[string]string{"pci_passthrough:alias": "a100:1"}})

	for _, tc := range []struct {
		microversion string
		description  string
		extraSpecs   map[string]string
	}{
		{"", "", nil},
		{"2.55", "with a GPU", nil},
		{"2.61", "with a GPU", map[string]string{"pci_passthrough:alias": "a100:1"}},
	} {
		c.compute.Microversion = tc.microversion
		fl, err := flavors.Get(ctx(), c.compute, "gpu").Extract()
		if err != nil {
			t.Fatalf("%s: %v", tc.microversion, err)
		}
		if fl.Description != tc.description || len(fl.ExtraSpecs) != len(tc.extraSpecs) || fl.ExtraSpecs["pci_passthrough:alias"] != tc.extraSpecs["pci_passthrough:alias"] || fl.Swap != 512 {
			t.Errorf("at %q: flavor = %+v", tc.microversion, fl)
		}
	}

	// os-extra_specs: the list, one key, a missing key.
	c.compute.Microversion = ""
	specs, err := flavors.ListExtraSpecs(ctx(), c.compute, "gpu").Extract()
	if err != nil || specs["pci_passthrough:alias"] != "a100:1" {
		t.Errorf("extra specs = %v, %v", specs, err)
	}
	_, err = flavors.GetExtraSpec(ctx(), c.compute, "gpu", "nope").Extract()
	wantCode(t, err, http.StatusNotFound)

	// minRam filters, sort_key orders, swap is "" for none before 2.75
	// and 0 from it.
	pages, err := flavors.ListDetail(c.compute, flavors.ListOpts{MinRAM: 8192, SortKey: "memory_mb", SortDir: "desc"}).AllPages(ctx())
	if err != nil {
		t.Fatal(err)
	}
	list, _ := flavors.ExtractFlavors(pages)
	if len(list) != 3 || list[0].Name != "g1.large" || list[2].Name != "m1.large" {
		t.Errorf("flavors with 8 GiB or more, largest first = %+v", list)
	}
	raw := rawClient{t: t, token: c.provider.TokenID}
	for v, want := range map[string]any{"2.74": "", "2.75": float64(0)} {
		_, body := raw.do("GET", s.URL()+computeV21+"/flavors/1", nil, "X-OpenStack-Nova-API-Version", v)
		if got := path(body, "flavor", "swap"); got != want {
			t.Errorf("swap at %s = %#v, want %#v", v, got, want)
		}
	}
}

func TestServersFollowTheMicroversion(t *testing.T) {
	s, c := setup(t, Options{})
	v := s.AddServer(NovaServer{Name: "Node_1.example", Flavor: "m1.large", AZ: "zone-a"})
	raw := rawClient{t: t, token: c.provider.TokenID}
	get := func(version string) map[string]any {
		status, body := raw.do("GET", s.URL()+computeV21+"/servers/"+v.ID, nil, "OpenStack-API-Version", "compute "+version)
		if status != http.StatusOK {
			t.Fatalf("GET server at %s: %d %v", version, status, body)
		}
		return path(body, "server").(map[string]any)
	}
	old := get("2.1")
	for _, k := range []string{"locked", "description", "tags", "OS-EXT-SRV-ATTR:hostname", "pinned_availability_zone", "OS-EXT-SRV-ATTR:host"} {
		if _, ok := old[k]; ok {
			t.Errorf("2.1 shows %s", k)
		}
	}
	if path(old, "flavor", "id") != "4" || path(old, "flavor", "links") == nil {
		t.Errorf("2.1 flavor = %v, want a link to flavor 4", old["flavor"])
	}
	cur := get("2.96")
	want := map[string]any{
		"locked": false, "description": nil, "OS-EXT-SRV-ATTR:hostname": "node-1-example",
		"pinned_availability_zone": "zone-a", "locked_reason": nil, "trusted_image_certificates": nil,
	}
	for k, w := range want {
		if got, ok := cur[k]; !ok || got != w {
			t.Errorf("2.96 %s = %#v (present %v), want %#v", k, got, ok, w)
		}
	}
	if _, ok := cur["OS-EXT-SRV-ATTR:host"]; ok {
		t.Error("a member sees the admin-only OS-EXT-SRV-ATTR:host")
	}
	if path(cur, "flavor", "original_name") != "m1.large" || path(cur, "flavor", "extra_specs") == nil {
		t.Errorf("2.96 flavor = %v", cur["flavor"])
	}
	if cur["server_groups"] == nil {
		t.Error("2.96 show has no server_groups")
	}

	// Malformed and out-of-range versions.
	for version, want := range map[string]int{"2.x": http.StatusBadRequest, "2.05": http.StatusBadRequest, "3.0": http.StatusNotAcceptable, "2.97": http.StatusNotAcceptable, "latest": http.StatusOK} {
		if status, _ := raw.do("GET", s.URL()+computeV21+"/servers/detail", nil, "X-OpenStack-Nova-API-Version", version); status != want {
			t.Errorf("version %s: %d, want %d", version, status, want)
		}
	}
}

func TestNovaPolicyAnswersLikeNova(t *testing.T) {
	s := NewServer(t, Options{Users: []User{
		{Name: "alice", Password: "a"},
		{Name: "bob", Password: "b", Project: "elsewhere"},
	}})
	auth := func(user, password, project string) clients {
		return connect(t, s, gophercloud.AuthOptions{
			IdentityEndpoint: s.AuthURL(), Username: user, Password: password, DomainName: DefaultDomain,
			TenantName: project, AllowReauth: true,
		})
	}
	c := auth("alice", "a", DefaultProject)
	v := s.AddServer(NovaServer{Name: "node-1"})

	// Admin-only calls are 403 with Nova's policy message, not 404.
	_, err := flavors.Create(ctx(), c.compute, flavors.CreateOpts{Name: "x", RAM: 1, VCPUs: 1, Disk: gophercloud.IntToPointer(1)}).Extract()
	wantForbidden(t, err, "os_compute_api:os-flavor-manage:create")
	wantForbidden(t, flavors.Delete(ctx(), c.compute, "1").ExtractErr(), "os_compute_api:os-flavor-manage:delete")
	_, err = flavors.ListAccesses(c.compute, "1").AllPages(ctx())
	wantForbidden(t, err, "os_compute_api:os-flavor-access")
	_, err = flavors.CreateExtraSpecs(ctx(), c.compute, "1", flavors.ExtraSpecsOpts{"k": "v"}).Extract()
	wantForbidden(t, err, "os_compute_api:os-flavor-extra-specs:create")
	_, err = hypervisors.List(c.compute, nil).AllPages(ctx())
	wantForbidden(t, err, "os_compute_api:os-hypervisors:list-detail")
	_, err = services.List(c.compute, nil).AllPages(ctx())
	wantForbidden(t, err, "os_compute_api:os-services:list")
	_, err = servers.List(c.compute, servers.ListOpts{AllTenants: true}).AllPages(ctx())
	wantForbidden(t, err, "os_compute_api:servers:detail:get_all_tenants")
	err = servers.ResetState(ctx(), c.compute, v.ID, servers.StateActive).ExtractErr()
	wantForbidden(t, err, "os_compute_api:os-admin-actions:reset_state")

	// Another project's server is not found, and not listed.
	bob := auth("bob", "b", "elsewhere")
	_, err = servers.Get(ctx(), bob.compute, v.ID).Extract()
	wantCode(t, err, http.StatusNotFound)
	n := 0
	err = servers.List(bob.compute, nil).EachPage(ctx(), func(_ context.Context, p pagination.Page) (bool, error) {
		list, err := servers.ExtractServers(p)
		n += len(list)
		return true, err
	})
	if err != nil || n != 0 {
		t.Errorf("bob lists %d servers (%v), want none of alice's", n, err)
	}
}

// wantForbidden fails unless err is Nova's 403 naming rule.
func wantForbidden(t *testing.T, err error, rule string) {
	t.Helper()
	wantCode(t, err, http.StatusForbidden)
	var e gophercloud.ErrUnexpectedResponseCode
	errors.As(err, &e)
	want := `{"forbidden":{"code":403,"message":"Policy doesn't allow ` + rule + ` to be performed."}}`
	if strings.TrimSpace(string(e.Body)) != want {
		t.Errorf("403 body %s, want %s", e.Body, want)
	}
}

package openstacksim

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"testing"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/availabilityzones"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/flavors"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/gophercloud/gophercloud/v2/pagination"
)

func TestServersListNameRegexAndPagination(t *testing.T) {
	s, c := setup(t, Options{MaxLimit: 2})
	for i := range 5 {
		s.AddServer(NovaServer{Name: fmt.Sprintf("node-%d", i)})
	}
	s.AddServer(NovaServer{Name: "node-10"})

	// OCCM looks nodes up by ^name$ (regexp.QuoteMeta'd).
	pages, err := servers.List(c.compute, servers.ListOpts{Name: "^" + regexp.QuoteMeta("node-1") + "$"}).AllPages(ctx())
	if err != nil {
		t.Fatal(err)
	}
	got, err := servers.ExtractServers(pages)
	if err != nil || len(got) != 1 || got[0].Name != "node-1" {
		t.Fatalf("^node-1$ = %v, %v", got, err)
	}
	// Unanchored, the name is matched anywhere.
	pages, err = servers.List(c.compute, servers.ListOpts{Name: "node-1"}).AllPages(ctx())
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := servers.ExtractServers(pages); len(got) != 2 {
		t.Errorf("node-1 matched %d servers, want 2", len(got))
	}

	// Six servers in pages of at most 2: the pager follows servers_links,
	// and Nova's last full page links to an empty one.
	var names []string
	pageCount := 0
	err = servers.List(c.compute, nil).EachPage(ctx(), func(_ context.Context, p pagination.Page) (bool, error) {
		pageCount++
		ss, err := servers.ExtractServers(p)
		for _, v := range ss {
			names = append(names, v.Name)
		}
		return true, err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(names) != 6 || names[0] != "node-10" {
		t.Errorf("names = %v, want 6 newest first", names)
	}
	if pageCount != 3 {
		t.Errorf("pages = %d, want 3", pageCount)
	}
	if n := s.Stats()["GET /compute/v2.1/servers/detail"]; n < 4 {
		t.Errorf("detail requests = %d, want the empty 4th page fetched too", n)
	}
}

func TestServerGetAndNotFound(t *testing.T) {
	s, c := setup(t, Options{})
	v := s.AddServer(NovaServer{Name: "node-a", Flavor: "m1.large", AZ: "zone-b", Ports: []ServerPort{{FloatingIP: "auto"}}})
	got, err := servers.Get(ctx(), c.compute, v.ID).Extract()
	if err != nil {
		t.Fatal(err)
	}
	if got.Name != "node-a" || got.Status != "ACTIVE" || got.AvailabilityZone != "zone-b" || got.Flavor["id"] != "4" {
		t.Errorf("server = %+v", got)
	}
	addrs := got.Addresses["private"].([]any)
	if len(addrs) != 2 {
		t.Fatalf("addresses = %v, want fixed and floating", got.Addresses)
	}
	if a := addrs[1].(map[string]any); a["OS-EXT-IPS:type"] != "floating" || a["addr"] != s.Servers()[0].Ports[0].FloatingIP {
		t.Errorf("floating address = %v", a)
	}
	fl, err := flavors.Get(ctx(), c.compute, "4").Extract()
	if err != nil || fl.Name != "m1.large" || fl.VCPUs != 4 {
		t.Errorf("flavor = %+v, %v", fl, err)
	}

	_, err = servers.Get(ctx(), c.compute, "missing").Extract()
	if !gophercloud.ResponseCodeIs(err, http.StatusNotFound) {
		t.Errorf("get missing: %v, want 404", err)
	}

	s.SetServerStatus(v.ID, StatusShutoff)
	got, _ = servers.Get(ctx(), c.compute, v.ID).Extract()
	if got.Status != "SHUTOFF" || got.PowerState != servers.SHUTDOWN {
		t.Errorf("after shutoff: %s %v", got.Status, got.PowerState)
	}

	// Microversion 2.47 embeds the flavor.
	c.compute.Microversion = "2.47"
	got, err = servers.Get(ctx(), c.compute, v.ID).Extract()
	if err != nil || got.Flavor["original_name"] != "m1.large" {
		t.Errorf("2.47 flavor = %v, %v", got.Flavor, err)
	}
}

// TestServerActionsAndAZs: os-stop, os-start and delete are Nova tasks
// (see nova_tasks.go): 202/204 at once, the server showing the task in
// OS-EXT-STS:task_state with its status unchanged until the task settles
// (here on the second read), another action meanwhile 409.
func TestServerActionsAndAZs(t *testing.T) {
	s, c := setup(t, Options{})
	v := s.AddServer(NovaServer{Name: "n", AZ: "az-2"})
	task := func() (status string, task any) {
		t.Helper()
		var got struct {
			Status string
			Task   any `json:"OS-EXT-STS:task_state"`
		}
		if err := servers.Get(ctx(), c.compute, v.ID).ExtractIntoStructPtr(&got, "server"); err != nil {
			t.Fatal(err)
		}
		return got.Status, got.Task
	}
	if err := servers.Stop(ctx(), c.compute, v.ID).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	if status, tk := task(); status != StatusActive || tk != "powering-off" {
		t.Errorf("stopping: %s %v, want ACTIVE powering-off", status, tk)
	}
	wantCode(t, servers.Stop(ctx(), c.compute, v.ID).ExtractErr(), http.StatusConflict)
	wantCode(t, servers.Start(ctx(), c.compute, v.ID).ExtractErr(), http.StatusConflict)
	if status, tk := task(); status != StatusShutoff || tk != nil {
		t.Errorf("stopped: %s %v, want SHUTOFF and no task", status, tk)
	}
	if err := servers.Start(ctx(), c.compute, v.ID).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	s.Advance()
	if status, tk := task(); status != StatusActive || tk != nil {
		t.Errorf("started: %s %v", status, tk)
	}
	pages, err := availabilityzones.List(c.compute).AllPages(ctx())
	if err != nil {
		t.Fatal(err)
	}
	zones, _ := availabilityzones.ExtractAvailabilityZones(pages)
	if len(zones) != 2 {
		t.Errorf("zones = %+v", zones)
	}
	if err := servers.Delete(ctx(), c.compute, v.ID).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	if err := servers.Delete(ctx(), c.compute, v.ID).ExtractErr(); err != nil {
		t.Errorf("deleting again: %v", err)
	}
	if _, tk := task(); tk != "deleting" {
		t.Errorf("deleting: task %v", tk)
	}
	_, err = servers.Get(ctx(), c.compute, v.ID).Extract()
	wantCode(t, err, http.StatusNotFound)
	for _, p := range s.State().Ports {
		if p.DeviceID == v.ID {
			t.Errorf("port %s of the deleted server is left", p.ID)
		}
	}
}

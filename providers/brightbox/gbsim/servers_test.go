package gbsim

import (
	"net/http"
	"testing"

	"github.com/brightbox/gobrightbox/v2/enums/serverstatus"
)

func TestServers(t *testing.T) {
	s, c := setup(t, Options{})
	srv := s.AddServer(CloudServer{Name: "worker-1", Zone: "gb1-b", Type: "4gb.ssd", IPv4: "10.241.0.5", IPv6: "2a02:1348:17c::5"})
	other := s.AddServer(CloudServer{Name: "worker-2", Status: StatusInactive})

	got, err := c.Server(ctx(), srv.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != srv.ID || got.Name != "worker-1" || got.Status != serverstatus.Active {
		t.Errorf("server = %s %q %v", got.ID, got.Name, got.Status)
	}
	if got.Zone.Handle != "gb1-b" || got.ServerType.Handle != "4gb.ssd" || got.Fqdn != srv.ID+".gb1.brightbox.com" {
		t.Errorf("zone %q, type %q, fqdn %q", got.Zone.Handle, got.ServerType.Handle, got.Fqdn)
	}
	if len(got.Interfaces) != 1 || got.Interfaces[0].IPv4Address != "10.241.0.5" || got.Interfaces[0].IPv6Address != "2a02:1348:17c::5" {
		t.Errorf("interfaces = %+v", got.Interfaces)
	}
	if len(got.ServerGroups) != 1 || !got.ServerGroups[0].Default {
		t.Errorf("server groups = %+v, want the default group", got.ServerGroups)
	}

	list, err := c.Servers(ctx())
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[1].ID != other.ID || list[1].Status != serverstatus.Inactive {
		t.Errorf("servers = %+v", list)
	}

	_, err = c.Server(ctx(), "srv-nope0")
	ae := wantAPIError(t, err, http.StatusNotFound)
	if ae.ErrorName != "missing_resource" || len(ae.Errors) != 1 {
		t.Errorf("error body = %q %q", ae.ErrorName, ae.Errors)
	}

	zones, err := c.Zones(ctx())
	if err != nil || len(zones) != 2 || zones[0].Handle != "gb1-a" {
		t.Errorf("zones = %+v, %v", zones, err)
	}
	types, err := c.ServerTypes(ctx())
	if err != nil || len(types) == 0 {
		t.Errorf("server types = %+v, %v", types, err)
	}
	accounts, err := c.Accounts(ctx())
	if err != nil || len(accounts) != 1 || accounts[0].ID != s.Account() {
		t.Errorf("accounts = %+v, %v", accounts, err)
	}
}

func TestDeletedServerStaysListed(t *testing.T) {
	s, c := setup(t, Options{DeletedReads: 2})
	srv := s.AddServer(CloudServer{Name: "gone"})
	s.DeleteServer(srv.ID)
	for i := range 2 {
		list, err := c.Servers(ctx())
		if err != nil {
			t.Fatal(err)
		}
		if len(list) != 1 || list[0].Status != serverstatus.Deleted || list[0].DeletedAt == nil {
			t.Fatalf("list %d = %+v, want the deleted server", i, list)
		}
	}
	list, err := c.Servers(ctx())
	if err != nil || len(list) != 0 {
		t.Fatalf("third list = %+v, %v; want none", list, err)
	}
	_, err = c.Server(ctx(), srv.ID)
	wantStatus(t, err, http.StatusNotFound)

	other := s.AddServer(CloudServer{Name: "purged"})
	s.DeleteServer(other.ID)
	s.PurgeDeleted()
	if list, err := c.Servers(ctx()); err != nil || len(list) != 0 {
		t.Fatalf("list after PurgeDeleted = %+v, %v; want none", list, err)
	}
}

func TestCreatingServerSettles(t *testing.T) {
	s, c := setup(t, Options{ProvisioningReads: 2})
	srv := s.AddServer(CloudServer{Name: "booting", Status: StatusCreating})
	got, err := c.Server(ctx(), srv.ID)
	if err != nil || got.Status != serverstatus.Creating || got.StartedAt != nil {
		t.Fatalf("first read = %+v, %v; want creating, not started", got, err)
	}
	list, err := c.Servers(ctx())
	if err != nil || list[0].Status != serverstatus.Active {
		t.Fatalf("second read = %+v, %v; want active", list, err)
	}
}

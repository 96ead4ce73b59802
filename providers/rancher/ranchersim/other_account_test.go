package ranchersim

import (
	"testing"

	rancher "github.com/rancher/go-rancher/v2"
)

// TestOtherEnvironmentSeesOnlyItsHosts: go-rancher with the other
// environment's CATTLE_URL and API key, on the same URL, lists only that
// environment's host, finds none of this environment's by uuid (the
// provider's lookup) and gets NotFound for one by ID; this environment's
// key still sees only its own host, and neither key opens the other
// environment's URL.
func TestOtherEnvironmentSeesOnlyItsHosts(t *testing.T) {
	s, mine := setup(t, Options{})
	h := s.AddHost(Host{Hostname: "node-0"})
	creds := s.Cloud().OtherAccount()
	if creds.Env["CATTLE_URL"] == s.ProjectURL(s.URL()) || creds.Env["CATTLE_ACCESS_KEY"] == DefaultAccessKey || creds.CloudConfig != "" {
		t.Fatalf("OtherAccount = %+v: the same environment", creds)
	}
	if again := s.Cloud().OtherAccount(); again.Env["CATTLE_ACCESS_KEY"] != creds.Env["CATTLE_ACCESS_KEY"] {
		t.Fatalf("OtherAccount changed: %v, then %v", creds, again)
	}
	other := connectAs(t, creds.Env["CATTLE_URL"], creds.Env["CATTLE_ACCESS_KEY"], creds.Env["CATTLE_SECRET_KEY"])

	hosts, err := other.Host.List(nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(hosts.Data) != 1 || hosts.Data[0].Hostname != "other-env-0" || hosts.Data[0].AccountId != OtherProject {
		t.Fatalf("the other environment lists %+v, want only other-env-0", hosts.Data)
	}
	theirs := hosts.Data[0]
	if theirs.Id == h.ID || theirs.Uuid == h.UUID {
		t.Errorf("the environments' hosts share an ID: %s %s, %s %s", theirs.Id, theirs.Uuid, h.ID, h.UUID)
	}
	if byUUID, err := other.Host.List(filters("uuid", h.UUID, "removed_null", "1")); err != nil || len(byUUID.Data) != 0 {
		t.Errorf("the other environment's list by uuid = %+v, %v; want empty", byUUID, err)
	}
	if got, err := other.Host.ById(h.ID); err != nil || got != nil {
		t.Errorf("the other environment's ById(%s) = %+v, %v; want nil, nil (404)", h.ID, got, err)
	}

	hosts, err = mine.Host.List(nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(hosts.Data) != 1 || hosts.Data[0].Id != h.ID {
		t.Errorf("this environment lists %+v, want only node-0", hosts.Data)
	}
	if byUUID, err := mine.Host.List(filters("uuid", theirs.Uuid)); err != nil || len(byUUID.Data) != 0 {
		t.Errorf("this environment's list by the other's uuid = %+v, %v; want empty", byUUID, err)
	}
	if got, err := mine.Host.ById(theirs.Id); err != nil || got != nil {
		t.Errorf("this environment reads the other's host: %+v, %v", got, err)
	}
	if _, err := rancher.NewRancherClient(&rancher.ClientOpts{Url: creds.Env["CATTLE_URL"], AccessKey: DefaultAccessKey, SecretKey: DefaultSecretKey}); err == nil {
		t.Error("this environment's key opens the other environment's URL")
	}
	if _, err := rancher.NewRancherClient(&rancher.ClientOpts{Url: s.ProjectURL(s.URL()), AccessKey: OtherAccessKey, SecretKey: OtherSecretKey}); err == nil {
		t.Error("the other environment's key opens this environment's URL")
	}
}

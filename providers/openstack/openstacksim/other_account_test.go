package openstacksim

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
)

// otherPasswordAuth is the other project's user's password auth, scoped
// to the other project.
func otherPasswordAuth(s *Server) gophercloud.AuthOptions {
	return gophercloud.AuthOptions{
		IdentityEndpoint: s.URL() + "/identity", Username: OtherUsername, Password: OtherPassword,
		DomainName: DefaultDomain, TenantName: OtherProjectName, AllowReauth: true,
	}
}

// listServers lists the servers c's token sees.
func listServers(t *testing.T, c clients) []servers.Server {
	t.Helper()
	pages, err := servers.List(c.compute, nil).AllPages(ctx())
	if err != nil {
		t.Fatal(err)
	}
	got, err := servers.ExtractServers(pages)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// wantItemNotFound fails unless err is Nova's 404 itemNotFound.
func wantItemNotFound(t *testing.T, err error) {
	t.Helper()
	wantCode(t, err, http.StatusNotFound)
	var e gophercloud.ErrUnexpectedResponseCode
	errors.As(err, &e)
	var body struct {
		ItemNotFound struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"itemNotFound"`
	}
	if json.Unmarshal(e.Body, &body) != nil || body.ItemNotFound.Code != http.StatusNotFound ||
		!strings.HasSuffix(body.ItemNotFound.Message, "could not be found.") {
		t.Errorf("404 body %s, want Nova's itemNotFound", e.Body)
	}
}

// TestOtherProjectSeesOnlyItsServers: gophercloud with the other
// project's credentials (password, or application credential), at the
// same auth URL, lists only that project's server and gets Nova's 404
// itemNotFound for this project's; it sees the shared external network
// but not this project's private one. This project's credentials still
// see only their own server.
func TestOtherProjectSeesOnlyItsServers(t *testing.T) {
	s, mine := setup(t, Options{})
	v := s.AddServer(NovaServer{Name: "node-0"})
	o := s.OtherProject()
	if s.OtherProject() != o {
		t.Fatal("OtherProject made a second project")
	}
	byPassword := connect(t, s, otherPasswordAuth(s))
	byAppCred := connect(t, s, gophercloud.AuthOptions{IdentityEndpoint: s.AuthURL(),
		ApplicationCredentialID: OtherApplicationCredentialID, ApplicationCredentialSecret: OtherApplicationCredentialSecret})

	var theirs string
	for name, other := range map[string]clients{"password": byPassword, "application credential": byAppCred} {
		list := listServers(t, other)
		if len(list) != 1 || list[0].Name != "other-project-0" || list[0].TenantID != o.opts.Users[0].ProjectID {
			t.Fatalf("%s: the other project lists %+v, want only other-project-0", name, list)
		}
		theirs = list[0].ID
		if theirs == v.ID {
			t.Fatalf("the projects' servers share the ID %s", theirs)
		}
		_, err := servers.Get(ctx(), other.compute, v.ID).Extract()
		wantItemNotFound(t, err)

		d := s.Defaults()
		if n, err := networks.Get(ctx(), other.network, d.FloatingNetworkID).Extract(); err != nil || n.ID != d.FloatingNetworkID {
			t.Errorf("%s: the shared external network = %+v, %v", name, n, err)
		}
		_, err = networks.Get(ctx(), other.network, d.NetworkID).Extract()
		wantNeutronError(t, err, http.StatusNotFound, "NetworkNotFound")
	}

	list := listServers(t, mine)
	if len(list) != 1 || list[0].ID != v.ID {
		t.Errorf("this project lists %+v, want only node-0", list)
	}
	_, err := servers.Get(ctx(), mine.compute, theirs).Extract()
	wantItemNotFound(t, err)

	// Keystone refuses the other user a scope on this project.
	ao := otherPasswordAuth(s)
	ao.TenantName = DefaultProject
	if _, err := openstack.AuthenticatedClient(ctx(), ao); err == nil {
		t.Error("the other user got a token for this project")
	}
}

// TestOtherAccountCloudConfig: the other project's cloud.conf names its
// user and project, its own subnet and router, and the shared external
// network; the router's gateway address is not one of this project's.
func TestOtherAccountCloudConfig(t *testing.T) {
	s := NewServer(t, Options{})
	c := s.Cloud()
	conf := c.OtherAccount().CloudConfig
	if again := c.OtherAccount().CloudConfig; again != conf {
		t.Fatalf("OtherAccount changed:\n%s\nthen\n%s", conf, again)
	}
	mine, theirs := s.Defaults(), s.OtherProject().Defaults()
	for _, want := range []string{
		"auth-url = " + s.AuthURL(), "username = " + OtherUsername, "project-name = " + OtherProjectName,
		"subnet-id = " + theirs.SubnetID, "floating-network-id = " + mine.FloatingNetworkID, "router-id = " + theirs.RouterID,
	} {
		if !strings.Contains(conf, want+"\n") {
			t.Errorf("the other cloud.conf lacks %q:\n%s", want, conf)
		}
	}
	if theirs.SubnetID == mine.SubnetID || theirs.RouterID == mine.RouterID || theirs.NetworkID == mine.NetworkID {
		t.Errorf("the projects share a private network, subnet or router: %+v, %+v", mine, theirs)
	}
	gw := func(s *Server, id string) string {
		rt, ok := s.st.routers.Get(id)
		if !ok || rt.ExternalGatewayInfo == nil || len(rt.ExternalGatewayInfo.ExternalFixedIPs) == 0 {
			t.Fatalf("router %s has no gateway", id)
		}
		return rt.ExternalGatewayInfo.ExternalFixedIPs[0].IPAddress
	}
	if a, b := gw(s, mine.RouterID), gw(s.OtherProject(), theirs.RouterID); a == b {
		t.Errorf("both routers' gateways are %s", a)
	}
}

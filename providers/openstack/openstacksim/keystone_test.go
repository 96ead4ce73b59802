package openstacksim

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/tokens"
)

func TestPasswordAuthAndCatalog(t *testing.T) {
	s, c := setup(t, Options{})
	if c.provider.Token() == "" {
		t.Fatal("no token")
	}
	for _, sc := range []*gophercloud.ServiceClient{c.compute, c.network, c.lb} {
		if sc.Endpoint == "" || sc.Endpoint[:len(s.URL())] != s.URL() {
			t.Errorf("endpoint %q does not point at %s", sc.Endpoint, s.URL())
		}
	}
	if want := s.URL() + "/network/v2.0/"; c.network.ResourceBase != want {
		t.Errorf("network ResourceBase = %q, want %q", c.network.ResourceBase, want)
	}
	if want := s.URL() + "/load-balancer/v2.0/"; c.lb.ResourceBase != want {
		t.Errorf("lb ResourceBase = %q, want %q", c.lb.ResourceBase, want)
	}
	// Versioned auth URL (no discovery) works too, and the internal
	// interface is in the catalog.
	ao := passwordAuth(s)
	ao.IdentityEndpoint = s.AuthURL()
	pc, err := openstack.AuthenticatedClient(ctx(), ao)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := openstack.NewComputeV2(pc, gophercloud.EndpointOpts{Region: s.Region(), Availability: gophercloud.AvailabilityInternal}); err != nil {
		t.Fatal(err)
	}
	if _, err := openstack.NewComputeV2(pc, gophercloud.EndpointOpts{Region: "Elsewhere"}); err == nil {
		t.Error("found a compute endpoint in an unknown region")
	}
}

func TestBadCredentials(t *testing.T) {
	s := NewServer(t, Options{})
	for name, ao := range map[string]gophercloud.AuthOptions{
		"password": {IdentityEndpoint: s.AuthURL(), Username: DefaultUsername, Password: "wrong", DomainName: DefaultDomain, TenantName: DefaultProject},
		"domain":   {IdentityEndpoint: s.AuthURL(), Username: DefaultUsername, Password: DefaultPassword, DomainName: "other", TenantName: DefaultProject},
		"project":  {IdentityEndpoint: s.AuthURL(), Username: DefaultUsername, Password: DefaultPassword, DomainName: DefaultDomain, TenantName: "nope"},
		"appcred":  {IdentityEndpoint: s.AuthURL(), ApplicationCredentialID: "x", ApplicationCredentialSecret: "y"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := openstack.AuthenticatedClient(ctx(), ao)
			wantCode(t, err, http.StatusUnauthorized)
		})
	}
}

func TestApplicationCredentialAuth(t *testing.T) {
	s := NewServer(t, Options{ApplicationCredentials: []ApplicationCredential{{ID: "ac-1", Name: "ccm", Secret: "s3cret"}}})
	for name, ao := range map[string]gophercloud.AuthOptions{
		"by id":   {IdentityEndpoint: s.AuthURL(), ApplicationCredentialID: "ac-1", ApplicationCredentialSecret: "s3cret", AllowReauth: true},
		"by name": {IdentityEndpoint: s.AuthURL(), ApplicationCredentialName: "ccm", Username: DefaultUsername, DomainName: DefaultDomain, ApplicationCredentialSecret: "s3cret"},
	} {
		t.Run(name, func(t *testing.T) {
			c := connect(t, s, ao)
			if _, err := servers.List(c.compute, nil).AllPages(ctx()); err != nil {
				t.Fatal(err)
			}
			res := c.provider.GetAuthResult().(tokens.CreateResult)
			var body struct { // ExtractInto unwraps "token"
				AppCred struct{ ID string } `json:"application_credential"`
			}
			if err := res.ExtractInto(&body); err != nil || body.AppCred.ID != "ac-1" {
				t.Errorf("application credential in token = %+v, %v", body, err)
			}
			if p, err := res.ExtractProject(); err != nil || p.Name != DefaultProject {
				t.Errorf("project = %+v, %v", p, err)
			}
		})
	}
	ao := gophercloud.AuthOptions{IdentityEndpoint: s.AuthURL(), ApplicationCredentialID: "ac-1", ApplicationCredentialSecret: "bad"}
	_, err := openstack.AuthenticatedClient(ctx(), ao)
	wantCode(t, err, http.StatusUnauthorized)
}

func TestReauthAfterExpiry(t *testing.T) {
	s, c := setup(t, Options{})
	if _, err := servers.List(c.compute, nil).AllPages(ctx()); err != nil {
		t.Fatal(err)
	}
	old := c.provider.Token()
	s.ExpireTokens()
	if _, err := servers.List(c.compute, nil).AllPages(ctx()); err != nil {
		t.Fatalf("after ExpireTokens: %v", err)
	}
	if c.provider.Token() == old || s.TokensIssued() != 2 {
		t.Errorf("token not renewed: issued %d", s.TokensIssued())
	}

	// Without AllowReauth the 401 surfaces.
	ao := passwordAuth(s)
	ao.AllowReauth = false
	c2 := connect(t, s, ao)
	s.ExpireTokens()
	_, err := servers.List(c2.compute, nil).AllPages(ctx())
	wantCode(t, err, http.StatusUnauthorized)
}

func TestTokenTTL(t *testing.T) {
	s := NewServer(t, Options{TokenTTL: 50 * time.Millisecond})
	ao := passwordAuth(s)
	ao.AllowReauth = false
	c := connect(t, s, ao)
	time.Sleep(80 * time.Millisecond)
	_, err := servers.List(c.compute, nil).AllPages(ctx())
	wantCode(t, err, http.StatusUnauthorized)
}

func TestNoTokenIs401(t *testing.T) {
	s := NewServer(t, Options{})
	for _, path := range []string{"/compute/v2.1/servers/detail", "/network/v2.0/ports", "/load-balancer/v2.0/lbaas/loadbalancers"} {
		resp, err := http.Get(s.URL() + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("Content-Type") != "application/json" || resp.Header.Get("WWW-Authenticate") == "" {
			t.Errorf("GET %s: %d %q %q", path, resp.StatusCode, resp.Header.Get("Content-Type"), resp.Header.Get("WWW-Authenticate"))
		}
	}
	// Version documents need no token.
	for _, path := range []string{"/identity", "/identity/v3", "/network", "/network/", "/load-balancer/", "/compute/"} {
		resp, err := http.Get(s.URL() + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusMultipleChoices {
			t.Errorf("GET %s: %d", path, resp.StatusCode)
		}
	}
}

// TestSetPasswordRevokesTokens: a password change revokes the user's
// tokens, so a client re-authenticating with the old password gets 401
// and only the new one gets a token; another user's tokens stay valid.
func TestSetPasswordRevokesTokens(t *testing.T) {
	s := NewServer(t, Options{Users: []User{{Name: DefaultUsername, Password: DefaultPassword}, {Name: "other", Password: "other-pw"}}})
	ao := passwordAuth(s)
	ao.AllowReauth = false
	c := connect(t, s, ao)
	otherAO := ao
	otherAO.Username, otherAO.Password = "other", "other-pw"
	other := connect(t, s, otherAO)
	if !s.SetPassword(DefaultUsername, "pw-2") || s.SetPassword("nobody", "x") {
		t.Fatal("SetPassword reports the wrong users")
	}
	_, err := servers.List(c.compute, nil).AllPages(ctx())
	wantCode(t, err, http.StatusUnauthorized)
	if _, err := servers.List(other.compute, nil).AllPages(ctx()); err != nil {
		t.Errorf("another user's token: %v", err)
	}
	_, err = openstack.AuthenticatedClient(ctx(), ao)
	wantCode(t, err, http.StatusUnauthorized)
	ao.Password = "pw-2"
	c = connect(t, s, ao)
	if _, err := servers.List(c.compute, nil).AllPages(ctx()); err != nil {
		t.Errorf("with the new password: %v", err)
	}
	if !strings.Contains(s.CloudConfig(), "password = pw-2") {
		t.Errorf("CloudConfig has not the new password:\n%s", s.CloudConfig())
	}
}

// TestDeleteApplicationCredentialRevokesTokens: deleting an application
// credential revokes its tokens and refuses it; the one rotated to works.
func TestDeleteApplicationCredentialRevokesTokens(t *testing.T) {
	s := NewServer(t, Options{ApplicationCredentials: []ApplicationCredential{{ID: "ac-1", Secret: "s1"}, {ID: "ac-2", Secret: "s2"}}})
	ao := gophercloud.AuthOptions{IdentityEndpoint: s.AuthURL(), ApplicationCredentialID: "ac-1", ApplicationCredentialSecret: "s1"}
	c := connect(t, s, ao)
	if !s.DeleteApplicationCredential("ac-1") || s.DeleteApplicationCredential("ac-1") {
		t.Fatal("DeleteApplicationCredential reports the wrong credentials")
	}
	_, err := servers.List(c.compute, nil).AllPages(ctx())
	wantCode(t, err, http.StatusUnauthorized)
	_, err = openstack.AuthenticatedClient(ctx(), ao)
	wantCode(t, err, http.StatusUnauthorized)
	ao.ApplicationCredentialID, ao.ApplicationCredentialSecret = "ac-2", "s2"
	c = connect(t, s, ao)
	if _, err := servers.List(c.compute, nil).AllPages(ctx()); err != nil {
		t.Errorf("with the other application credential: %v", err)
	}
}

package openstacksim

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
)

func ctx() context.Context { return context.Background() }

// clients are real gophercloud service clients for one simulator.
type clients struct {
	provider *gophercloud.ProviderClient
	compute  *gophercloud.ServiceClient
	network  *gophercloud.ServiceClient
	lb       *gophercloud.ServiceClient
	volume   *gophercloud.ServiceClient
}

// passwordAuth is the default user's password auth, with re-auth on.
func passwordAuth(s *Server) gophercloud.AuthOptions {
	return gophercloud.AuthOptions{
		IdentityEndpoint: s.URL() + "/identity", Username: DefaultUsername, Password: DefaultPassword,
		DomainName: DefaultDomain, TenantName: DefaultProject, AllowReauth: true,
	}
}

// connect authenticates with ao and makes the service clients, failing
// the test on error.
func connect(t *testing.T, s *Server, ao gophercloud.AuthOptions) clients {
	t.Helper()
	pc, err := openstack.AuthenticatedClient(ctx(), ao)
	if err != nil {
		t.Fatalf("AuthenticatedClient: %v", err)
	}
	eo := gophercloud.EndpointOpts{Region: s.Region()}
	c := clients{provider: pc}
	if c.compute, err = openstack.NewComputeV2(pc, eo); err != nil {
		t.Fatalf("NewComputeV2: %v", err)
	}
	if c.network, err = openstack.NewNetworkV2(pc, eo); err != nil {
		t.Fatalf("NewNetworkV2: %v", err)
	}
	if c.lb, err = openstack.NewLoadBalancerV2(pc, eo); err != nil {
		t.Fatalf("NewLoadBalancerV2: %v", err)
	}
	if c.volume, err = openstack.NewBlockStorageV3(pc, eo); err != nil {
		t.Fatalf("NewBlockStorageV3: %v", err)
	}
	return c
}

// setup starts a simulator and connects to it with password auth.
func setup(t *testing.T, opts Options) (*Server, clients) {
	t.Helper()
	s := NewServer(t, opts)
	return s, connect(t, s, passwordAuth(s))
}

// wantCode fails unless err is an unexpected-response-code error with
// status.
func wantCode(t *testing.T, err error, status int) {
	t.Helper()
	var e gophercloud.ErrUnexpectedResponseCode
	if !errors.As(err, &e) || e.Actual != status {
		t.Fatalf("err = %v, want HTTP %d", err, status)
	}
}

// wantNeutronError fails unless err is a Neutron error with status and
// NeutronError type typ.
func wantNeutronError(t *testing.T, err error, status int, typ string) {
	t.Helper()
	wantCode(t, err, status)
	var e gophercloud.ErrUnexpectedResponseCode
	errors.As(err, &e)
	var body struct {
		NeutronError struct{ Type string }
	}
	if jerr := json.Unmarshal(e.Body, &body); jerr != nil || body.NeutronError.Type != typ {
		t.Fatalf("error body %s, want NeutronError type %s", e.Body, typ)
	}
}

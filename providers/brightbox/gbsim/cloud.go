package gbsim

import (
	"slices"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// Cloud is the simulator as a simkit.Cloud, through which the conformance
// suite (frameworktest.SimCloud), the end-to-end suite, the demo and the
// benchmarks drive every provider's simulated cloud alike. It is the
// Server, with the provider-neutral methods on top. The Brightbox provider
// is configured by its environment, and Brightbox has no route API.
type Cloud struct {
	*Server
	simkit.NoCloudConfig
	simkit.NoRoutes
}

var _ simkit.Cloud = (*Cloud)(nil)

// Cloud returns the server as a simkit.Cloud.
func (s *Server) Cloud() *Cloud { return &Cloud{Server: s} }

// StartCloud starts a simulated Brightbox with c's settings (the defaults
// for the rest) on a loopback port; Close stops it.
func StartCloud(c simkit.Common) *Cloud { return simkit.Started(New(Options{Common: c})).Cloud() }

// AddInstance creates an active server called name (DefaultZone,
// DefaultServerType, a private IPv4 and a public IPv6) and returns its ID.
func (c *Cloud) AddInstance(name string) string {
	return c.AddServer(CloudServer{Name: name}).ID
}

// DeleteInstance deletes a server (DeleteServer: it is listed as deleted
// for a while).
func (c *Cloud) DeleteInstance(id string) { c.DeleteServer(id) }

// ShutdownInstance stops a server (status inactive).
func (c *Cloud) ShutdownInstance(id string) { c.SetServerStatus(id, StatusInactive) }

// RotateSecret rotates the API client's secret and expires every token,
// so the provider must log in again with the new secret.
func (c *Cloud) RotateSecret(secret string) {
	c.SetClientSecret(secret)
	c.ExpireTokens()
}

// OtherAccount implements simkit.Accounts with another account
// (OtherAccountServer): its API client's ID and secret, and its ID as
// BRIGHTBOX_ACCOUNT, which Env sets and the provider checks against the
// accounts the client can use.
func (c *Cloud) OtherAccount() simkit.Credentials {
	o := c.OtherAccountServer()
	return simkit.Credentials{Env: map[string]string{
		"BRIGHTBOX_CLIENT":        o.ClientID(),
		"BRIGHTBOX_CLIENT_SECRET": o.ClientSecret(),
		"BRIGHTBOX_ACCOUNT":       o.Account(),
	}}
}

// Env is what the Brightbox provider needs to reach the cloud.
func (c *Cloud) Env() map[string]string { return c.Server.Env(c.URL()) }

// LoadBalancers lists the load balancers neither deleted nor being
// deleted (which settles with no further call), oldest first, with
// listeners as "TCP:80->:30080", members as server IDs and addresses as
// the provider reports them, each sorted. The provider's status has an
// entry for each public IPv4 and IPv6 of each cloud IP mapped to the load
// balancer, naming the cloud IP's FQDN beside the address: Addresses holds
// each address and, once for each, that FQDN, as a Service's ingress
// flattened to its IPs and hostnames does.
func (c *Cloud) LoadBalancers() []simkit.LoadBalancer {
	s := c.Server
	s.mu.Lock()
	defer s.mu.Unlock()
	addresses := map[string][]string{}
	for _, cip := range s.st.cips.All() {
		addresses[cip.Target] = append(addresses[cip.Target], cip.addresses()...)
	}
	// Members are sorted once per run of load balancers with the same
	// nodes (the service controller gives every one the same), and shared.
	var lastNodes, lastMembers []string
	var out []simkit.LoadBalancer
	for _, lb := range s.st.lbs.All() {
		if gone(lb.Status) {
			continue
		}
		n := simkit.LoadBalancer{ID: lb.ID, Name: lb.Name}
		if lastMembers == nil || !slices.Equal(lb.Nodes, lastNodes) {
			lastNodes, lastMembers = lb.Nodes, slices.Sorted(slices.Values(lb.Nodes))
		}
		n.Members = lastMembers
		for _, l := range lb.Listeners {
			n.Listeners = append(n.Listeners, simkit.FormatListener(l.Protocol, l.In, l.Out))
		}
		slices.Sort(n.Listeners)
		n.Addresses = slices.Sorted(slices.Values(addresses[lb.ID]))
		out = append(out, n)
	}
	return out
}

// addresses are the cloud IP's public addresses, each followed by its
// FQDN.
func (c *CloudIP) addresses() []string {
	var out []string
	for _, ip := range []string{c.PublicIPv4, c.PublicIPv6} {
		if ip != "" {
			out = append(out, ip)
			if c.FQDN != "" {
				out = append(out, c.FQDN)
			}
		}
	}
	return out
}

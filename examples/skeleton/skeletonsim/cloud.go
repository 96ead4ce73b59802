package skeletonsim

import (
	"slices"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// Cloud is the simulator as a simkit.Cloud, through which the conformance
// suite (frameworktest.SimCloud), the end-to-end suite, the demo and the
// benchmarks drive every provider's simulated cloud alike. It is the
// Server, with the provider-neutral methods on top. The skeleton provider
// is configured by its environment: its CloudConfig is "".
type Cloud struct {
	*Server
	simkit.NoCloudConfig
}

var _ simkit.Cloud = (*Cloud)(nil)

// Cloud returns the server as a simkit.Cloud.
func (s *Server) Cloud() *Cloud { return &Cloud{Server: s} }

// StartCloud starts a simulated Skeleton Cloud with c's settings (the
// defaults for the rest) on a loopback port; Close stops it.
func StartCloud(c simkit.Common) *Cloud { return simkit.Started(New(Options{Common: c})).Cloud() }

// AddInstance launches a running instance called name with LaunchInstance's
// defaults (type s-2 in zone sk-1a, next free addresses) and returns its
// ID.
func (c *Cloud) AddInstance(name string) string {
	return c.LaunchInstance(Instance{Name: name}).ID
}

// ShutdownInstance stops an instance.
func (c *Cloud) ShutdownInstance(id string) { c.SetInstanceStatus(id, StatusStopped) }

// OtherAccount implements simkit.Accounts with the Server's other account.
func (c *Cloud) OtherAccount() simkit.Credentials {
	return simkit.Credentials{Env: map[string]string{"SKELETON_TOKEN": c.Server.OtherAccount().Token()}}
}

// RotateSecret rotates the API token (SetToken).
func (c *Cloud) RotateSecret(token string) { c.SetToken(token) }

// Env is what the skeleton provider needs to reach the cloud.
func (c *Cloud) Env() map[string]string { return c.Server.Env(c.URL()) }

// Routes maps each route's destination CIDR to its target instance.
func (c *Cloud) Routes() map[string]string {
	out := map[string]string{}
	for _, r := range c.Server.Routes() {
		out[r.DestinationCIDR] = r.TargetInstanceID
	}
	return out
}

// LoadBalancers lists the load balancers, sorted by ID, with listeners as
// "TCP:80->:30080", members as instance IDs and the IPv4 address (as the
// provider reports it in the Service status) once the load balancer has
// one, each sorted.
//
// Cloud is no simkit.CompanionLister: a Skeleton load balancer is one
// resource, holding its own address, so the provider creates nothing
// beside it.
func (c *Cloud) LoadBalancers() []simkit.LoadBalancer {
	var out []simkit.LoadBalancer
	for _, lb := range c.Server.LoadBalancers() {
		out = append(out, neutral(lb))
	}
	return out
}

// neutral is a load balancer in the simkit form.
func neutral(lb LoadBalancer) simkit.LoadBalancer {
	out := simkit.LoadBalancer{ID: lb.ID, Name: lb.Name, Members: slices.Sorted(slices.Values(lb.Members))}
	for _, l := range lb.Listeners {
		out.Listeners = append(out.Listeners, simkit.FormatListener(l.Protocol, l.Port, l.TargetPort))
	}
	slices.Sort(out.Listeners)
	if lb.IPv4 != "" {
		out.Addresses = []string{lb.IPv4}
	}
	return out
}

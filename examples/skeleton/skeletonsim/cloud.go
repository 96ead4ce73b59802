package skeletonsim

import (
	"slices"

	"github.com/ccmkit/ccmkit/framework/frameworktest"
)

// Cloud is the simulator behind the provider-neutral frameworktest.Cloud
// interface, through which the conformance suite, the end-to-end suite and
// the benchmarks drive every provider's simulated cloud alike.
type Cloud struct {
	s *Server
}

var (
	_ frameworktest.Cloud         = (*Cloud)(nil)
	_ frameworktest.SecretRotator = (*Cloud)(nil)
)

// Cloud returns the server as a frameworktest.Cloud.
func (s *Server) Cloud() *Cloud { return &Cloud{s: s} }

// AddInstance launches a running instance called name with LaunchInstance's
// defaults (type s-2 in zone sk-1a, next free addresses) and returns its
// ID.
func (c *Cloud) AddInstance(name string) string {
	return c.s.LaunchInstance(Instance{Name: name}).ID
}

// DeleteInstance removes an instance.
func (c *Cloud) DeleteInstance(id string) { c.s.DeleteInstance(id) }

// ShutdownInstance stops an instance.
func (c *Cloud) ShutdownInstance(id string) { c.s.SetInstanceStatus(id, StatusStopped) }

// Fail makes every API request fail as f says (f's status with the API's
// error body, or f's own body), after f's delay, until restore is called.
func (c *Cloud) Fail(f frameworktest.Fault) (restore func()) {
	if f.Foreign() {
		return c.s.kit.Inject(f.SimFault())
	}
	return c.s.Inject(Fault{Status: f.Status, Delay: f.Delay})
}

// RotateSecret rotates the API token (SetToken).
func (c *Cloud) RotateSecret(token string) { c.s.SetToken(token) }

// Writes counts the mutating requests served.
func (c *Cloud) Writes() int { return c.s.Writes() }

// Advance makes provisioning load balancers active.
func (c *Cloud) Advance() { c.s.Advance() }

// LoadBalancers lists the load balancers, sorted by ID, with listeners as
// "TCP:80->:30080" and members as instance IDs, each sorted.
func (c *Cloud) LoadBalancers() []frameworktest.LoadBalancer {
	var out []frameworktest.LoadBalancer
	for _, lb := range c.s.LoadBalancers() {
		out = append(out, neutral(lb))
	}
	return out
}

// neutral is a load balancer in the frameworktest form.
func neutral(lb LoadBalancer) frameworktest.LoadBalancer {
	out := frameworktest.LoadBalancer{ID: lb.ID, Name: lb.Name, Members: slices.Sorted(slices.Values(lb.Members))}
	for _, l := range lb.Listeners {
		out.Listeners = append(out.Listeners, frameworktest.FormatListener(l.Protocol, l.Port, l.TargetPort))
	}
	slices.Sort(out.Listeners)
	return out
}

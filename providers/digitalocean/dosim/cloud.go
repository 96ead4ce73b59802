package dosim

import (
	"slices"
	"strconv"

	"github.com/ccmkit/ccmkit/framework/frameworktest"
)

// Cloud is the simulator behind the provider-neutral frameworktest.Cloud
// interface.
type Cloud struct {
	s *Server
}

var (
	_ frameworktest.Cloud         = (*Cloud)(nil)
	_ frameworktest.SecretRotator = (*Cloud)(nil)
)

// Cloud returns the server as a frameworktest.Cloud.
func (s *Server) Cloud() *Cloud { return &Cloud{s: s} }

// AddInstance creates an active droplet called name (size s-2vcpu-4gb,
// the Options region, private and public IPv4, public IPv6) and returns
// its ID in decimal.
func (c *Cloud) AddInstance(name string) string {
	return strconv.Itoa(c.s.AddDroplet(Droplet{Name: name}).ID)
}

// DeleteInstance removes a droplet.
func (c *Cloud) DeleteInstance(id string) {
	if n, err := strconv.Atoi(id); err == nil {
		c.s.DeleteDroplet(n)
	}
}

// ShutdownInstance powers a droplet off (status "off").
func (c *Cloud) ShutdownInstance(id string) {
	if n, err := strconv.Atoi(id); err == nil {
		c.s.SetDropletStatus(n, StatusOff)
	}
}

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

// Advance makes "new" load balancers active.
func (c *Cloud) Advance() { c.s.Advance() }

// LoadBalancers lists the load balancers, oldest first, with listeners as
// "TCP:80->:30080" and members as droplet IDs (droplet_ids, or the droplets
// carrying the LB's tag), each sorted.
func (c *Cloud) LoadBalancers() []frameworktest.LoadBalancer {
	var out []frameworktest.LoadBalancer
	for _, lb := range c.s.LoadBalancers() {
		n := frameworktest.LoadBalancer{ID: lb.ID, Name: lb.Name}
		for _, fr := range lb.ForwardingRules {
			n.Listeners = append(n.Listeners, frameworktest.FormatListener(fr.EntryProtocol, fr.EntryPort, fr.TargetPort))
		}
		slices.Sort(n.Listeners)
		for _, id := range c.s.members(lb) {
			n.Members = append(n.Members, strconv.Itoa(id))
		}
		slices.Sort(n.Members)
		out = append(out, n)
	}
	return out
}

// members are the droplets behind lb: its droplet_ids, or the droplets
// tagged with its tag.
func (s *Server) members(lb LoadBalancer) []int {
	if lb.Tag == "" {
		return lb.DropletIDs
	}
	var ids []int
	for _, d := range s.Droplets() {
		if slices.Contains(d.Tags, lb.Tag) {
			ids = append(ids, d.ID)
		}
	}
	return ids
}

package dosim

import (
	"slices"
	"strconv"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// Cloud is the simulator as a simkit.Cloud, through which the conformance
// suite (frameworktest.SimCloud), the end-to-end suite, the demo and the
// benchmarks drive every provider's simulated cloud alike. It is the
// Server, with the provider-neutral methods on top. The DigitalOcean
// provider is configured by its environment, and DigitalOcean has no
// route API.
type Cloud struct {
	*Server
	simkit.NoCloudConfig
	simkit.NoRoutes
}

var _ simkit.Cloud = (*Cloud)(nil)

// Cloud returns the server as a simkit.Cloud.
func (s *Server) Cloud() *Cloud { return &Cloud{Server: s} }

// StartCloud starts a simulated DigitalOcean with c's settings (the
// defaults for the rest) on a loopback port; Close stops it.
func StartCloud(c simkit.Common) *Cloud { return simkit.Started(New(Options{Common: c})).Cloud() }

// AddInstance creates an active droplet called name (size s-2vcpu-4gb,
// the Options region, private and public IPv4, public IPv6) and returns
// its ID in decimal.
func (c *Cloud) AddInstance(name string) string {
	return strconv.Itoa(c.AddDroplet(Droplet{Name: name}).ID)
}

// DeleteInstance removes a droplet.
func (c *Cloud) DeleteInstance(id string) {
	if n, err := strconv.Atoi(id); err == nil {
		c.DeleteDroplet(n)
	}
}

// ShutdownInstance powers a droplet off (status "off").
func (c *Cloud) ShutdownInstance(id string) {
	if n, err := strconv.Atoi(id); err == nil {
		c.SetDropletStatus(n, StatusOff)
	}
}

// OtherAccount implements simkit.Accounts with another team (OtherTeam).
func (c *Cloud) OtherAccount() simkit.Credentials {
	return simkit.Credentials{Env: map[string]string{"DO_ACCESS_TOKEN": c.OtherTeam().Token()}}
}

// RotateSecret rotates the API token (SetToken).
func (c *Cloud) RotateSecret(token string) { c.SetToken(token) }

// Env is what the DigitalOcean provider needs to reach the cloud.
func (c *Cloud) Env() map[string]string { return c.Server.Env(c.URL()) }

// LoadBalancers lists the load balancers, oldest first, with listeners as
// "TCP:80->:30080", members as droplet IDs (droplet_ids, or the droplets
// carrying the LB's tag) and addresses as the provider reports them (the
// ip, and the ipv6 of a DUALSTACK one), each sorted. A Service's hostname
// annotation replaces the addresses in its status with a name that
// DigitalOcean never holds, so a check comparing Addresses with a
// Service's ingress leaves such Services to the hostname.
//
// Cloud is no simulated companion lister: the provider creates nothing
// per load balancer beside it (its firewall is one per cluster, holding
// the NodePorts of every Service, and the certificates it uses are the
// user's), so nothing the provider makes can outlive a load balancer.
func (c *Cloud) LoadBalancers() []simkit.LoadBalancer {
	// Members are worked out once per tag, and once per run of load
	// balancers naming the same droplets (the service controller gives
	// every one the same nodes), and shared.
	var droplets []Droplet
	byTag := map[string][]string{}
	var lastIDs []int
	var lastMembers []string
	var out []simkit.LoadBalancer
	for _, lb := range c.Server.LoadBalancers() {
		n := simkit.LoadBalancer{ID: lb.ID, Name: lb.Name}
		for _, fr := range lb.ForwardingRules {
			n.Listeners = append(n.Listeners, simkit.FormatListener(fr.EntryProtocol, fr.EntryPort, fr.TargetPort))
		}
		slices.Sort(n.Listeners)
		switch {
		case lb.Tag != "":
			m, done := byTag[lb.Tag]
			if !done {
				if droplets == nil {
					droplets = c.Droplets()
				}
				m = tagged(droplets, lb.Tag)
				byTag[lb.Tag] = m
			}
			n.Members = m
		case lastMembers != nil && slices.Equal(lb.DropletIDs, lastIDs):
			n.Members = lastMembers
		default:
			n.Members = memberIDs(lb.DropletIDs)
			lastIDs, lastMembers = lb.DropletIDs, n.Members
		}
		for _, ip := range []string{lb.IP, lb.IPv6} {
			if ip != "" {
				n.Addresses = append(n.Addresses, ip)
			}
		}
		slices.Sort(n.Addresses)
		out = append(out, n)
	}
	return out
}

// tagged are the IDs of the droplets tagged tag, as LoadBalancers gives
// members.
func tagged(droplets []Droplet, tag string) []string {
	var ids []int
	for _, d := range droplets {
		if slices.Contains(d.Tags, tag) {
			ids = append(ids, d.ID)
		}
	}
	return memberIDs(ids)
}

// memberIDs are droplet IDs as LoadBalancers gives members: decimal,
// sorted; nil for none.
func memberIDs(ids []int) []string {
	if len(ids) == 0 {
		return nil
	}
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		out = append(out, strconv.Itoa(id))
	}
	slices.Sort(out)
	return out
}

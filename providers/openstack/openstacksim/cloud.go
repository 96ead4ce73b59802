package openstacksim

import (
	"maps"
	"slices"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// Cloud is the simulator as a simkit.Cloud, through which the conformance
// suite (frameworktest.SimCloud), the end-to-end suite, the demo and the
// benchmarks drive every provider's simulated cloud alike. It is the
// Server, with the provider-neutral methods on top. Its Inject fails
// Keystone too (a 401 from it means bad credentials to a client).
type Cloud struct {
	*Server
}

var _ simkit.Cloud = (*Cloud)(nil)

// Cloud returns the server as a simkit.Cloud.
func (s *Server) Cloud() *Cloud { return &Cloud{Server: s} }

// StartCloud starts a simulated OpenStack with c's settings (the defaults
// for the rest) on a loopback port; Close stops it.
func StartCloud(c simkit.Common) *Cloud { return simkit.Started(New(Options{Common: c})).Cloud() }

// AddInstance creates an ACTIVE m1.small server called name in zone
// "nova" with one port on the default network and returns its ID.
func (c *Cloud) AddInstance(name string) string {
	return c.AddServer(NovaServer{Name: name}).ID
}

// DeleteInstance removes a server and its ports.
func (c *Cloud) DeleteInstance(id string) { c.DeleteServer(id) }

// ShutdownInstance powers a server off (SHUTOFF).
func (c *Cloud) ShutdownInstance(id string) { c.SetServerStatus(id, StatusShutoff) }

// RotateSecret changes the password of the first user, the one
// CloudConfig authenticates as, to secret, and revokes that user's
// tokens, as Keystone does on a password change: a client keeps working
// only once it requests a new token with the new password.
func (c *Cloud) RotateSecret(secret string) {
	c.SetPassword(c.opts.Users[0].Name, secret)
}

// OtherAccount implements simkit.Accounts with another project
// (OtherProject): its cloud.conf, with the other project's user, its own
// subnet and router, and the shared external network.
func (c *Cloud) OtherAccount() simkit.Credentials {
	return simkit.Credentials{CloudConfig: c.OtherProject().CloudConfigFor(c.URL())}
}

// Env is nil: the OpenStack CCM is configured by its cloud.conf
// (CloudConfig).
func (c *Cloud) Env() map[string]string { return nil }

// Routes maps the default router's extra routes to the servers their next
// hops belong to.
func (c *Cloud) Routes() map[string]string {
	byIP := map[string]string{}
	for _, v := range c.Servers() {
		for _, p := range v.Ports {
			for _, ip := range p.FixedIPs {
				byIP[ip] = v.ID
			}
		}
	}
	out := map[string]string{}
	for dst, hop := range c.Server.Routes(c.Defaults().RouterID) {
		out[dst] = byIP[hop]
	}
	return out
}

// LoadBalancers lists the load balancers, oldest first, with listeners as
// "TCP:80->:30080" (the listener's protocol and port, and the protocol
// port of its default pool's members) and members as the IDs of the
// servers owning the member addresses, each sorted. An address no server
// has is reported as the ID of the deleted server that last had it (a
// member left behind when its server went is still that instance's), else
// as itself. Addresses are the address the provider reports: the floating
// IP on the VIP port, else the VIP address. (With [LoadBalancer]
// enable-ingress-hostname, a PROXY load balancer's status is a hostname
// made from that address and the configured suffix, which the cloud never
// holds.)
func (c *Cloud) LoadBalancers() []simkit.LoadBalancer {
	s := c.Server
	s.mu.Lock()
	defer s.mu.Unlock()
	onPort := map[string][]string{} // port ID: its floating IPs, oldest first
	fips := map[string]string{}
	for _, f := range s.st.floatingIPs.All() {
		if f.PortID == "" {
			continue
		}
		onPort[f.PortID] = append(onPort[f.PortID], f.FloatingIPAddress)
		if _, seen := fips[f.PortID]; !seen {
			fips[f.PortID] = f.FloatingIPAddress // the first, as the provider takes it
		}
	}
	owner := maps.Clone(s.st.goneServers)
	for _, p := range s.st.ports.All() {
		if _, isServer := s.st.servers.Get(p.DeviceID); !isServer {
			continue
		}
		for _, ip := range p.FixedIPs {
			owner[ip.IPAddress] = p.DeviceID
		}
		for _, ip := range onPort[p.ID] {
			owner[ip] = p.DeviceID
		}
	}
	var out []simkit.LoadBalancer
	for _, lb := range s.st.lbs.All() {
		n := simkit.LoadBalancer{ID: lb.ID, Name: lb.Name}
		if addr := cmpOr(fips[lb.VipPortID], lb.VipAddress); addr != "" {
			n.Addresses = []string{addr}
		}
		members := map[string]bool{}
		for _, l := range s.st.listeners.In(lb.ID) {
			port := 0
			for _, m := range s.st.members.In(l.DefaultPoolID) {
				if l.DefaultPoolID != "" {
					if port == 0 || m.ProtocolPort < port {
						port = m.ProtocolPort
					}
					members[cmpOr(owner[m.Address], m.Address)] = true
				}
			}
			n.Listeners = append(n.Listeners, simkit.FormatListener(l.Protocol, l.ProtocolPort, port))
		}
		for id := range members {
			n.Members = append(n.Members, id)
		}
		slices.Sort(n.Listeners)
		slices.Sort(n.Members)
		out = append(out, n)
	}
	return out
}

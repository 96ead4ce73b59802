package openstacksim

import (
	"maps"
	"slices"

	"github.com/ccmkit/ccmkit/framework/frameworktest"
)

// Cloud is the simulator behind the provider-neutral frameworktest.Cloud
// interface.
type Cloud struct {
	s *Server
}

var _ frameworktest.Cloud = (*Cloud)(nil)

// Cloud returns the server as a frameworktest.Cloud.
func (s *Server) Cloud() *Cloud { return &Cloud{s: s} }

// AddInstance creates an ACTIVE m1.small server called name in zone
// "nova" with one port on the default network and returns its ID.
func (c *Cloud) AddInstance(name string) string {
	return c.s.AddServer(NovaServer{Name: name}).ID
}

// DeleteInstance removes a server and its ports.
func (c *Cloud) DeleteInstance(id string) { c.s.DeleteServer(id) }

// ShutdownInstance powers a server off (SHUTOFF).
func (c *Cloud) ShutdownInstance(id string) { c.s.SetServerStatus(id, StatusShutoff) }

// Fail makes every API request fail as f says (f's status with the API's
// error body, or f's own body), after f's delay, until restore is called.
// Keystone fails too (a 401 from it means bad credentials to a client).
func (c *Cloud) Fail(f frameworktest.Fault) (restore func()) {
	return c.s.Inject(f.SimFault())
}

// Writes counts the successful mutating requests served.
func (c *Cloud) Writes() int { return c.s.Writes() }

// Advance settles every pending load balancer.
func (c *Cloud) Advance() { c.s.Advance() }

// LoadBalancers lists the load balancers, oldest first, with listeners as
// "TCP:80->:30080" (the listener's protocol and port, and the protocol
// port of its default pool's members) and members as the IDs of the
// servers owning the member addresses, each sorted. An address no server
// has is reported as the ID of the deleted server that last had it (a
// member left behind when its server went is still that instance's), else
// as itself.
func (c *Cloud) LoadBalancers() []frameworktest.LoadBalancer {
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	owner := maps.Clone(s.st.goneServers)
	for _, p := range s.st.ports.all() {
		if _, isServer := s.st.servers.get(p.DeviceID); !isServer {
			continue
		}
		for _, ip := range p.FixedIPs {
			owner[ip.IPAddress] = p.DeviceID
		}
		for _, f := range s.st.floatingIPs.all() {
			if f.PortID == p.ID {
				owner[f.FloatingIPAddress] = p.DeviceID
			}
		}
	}
	var out []frameworktest.LoadBalancer
	for _, lb := range s.st.lbs.all() {
		n := frameworktest.LoadBalancer{ID: lb.ID, Name: lb.Name}
		members := map[string]bool{}
		for _, l := range s.st.listeners.in(lb.ID) {
			port := 0
			for _, m := range s.st.members.in(l.DefaultPoolID) {
				if l.DefaultPoolID != "" {
					if port == 0 || m.ProtocolPort < port {
						port = m.ProtocolPort
					}
					members[cmpOr(owner[m.Address], m.Address)] = true
				}
			}
			n.Listeners = append(n.Listeners, frameworktest.FormatListener(l.Protocol, l.ProtocolPort, port))
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

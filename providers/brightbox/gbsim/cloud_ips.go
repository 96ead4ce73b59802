package gbsim

import (
	"fmt"
	"net/http"
	"net/netip"
	"slices"
	"strings"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// CloudIP is a cloud IP as the simulator holds it. AddCloudIP seeds one;
// the API renders it with what it is mapped to.
type CloudIP struct {
	// ID is "cip-xxxxx"; "" gets a new one.
	ID   string `json:"id"`
	Name string `json:"name"`
	// PublicIPv4 and PublicIPv6 are the next free addresses when "";
	// FQDN is "<id>.gb1.brightbox.com".
	PublicIPv4 string `json:"public_ipv4"`
	PublicIPv6 string `json:"public_ipv6"`
	FQDN       string `json:"fqdn"`
	// ReverseDNS is "cip-<a-b-c-d>.gb1.brightbox.com" when "".
	ReverseDNS string `json:"reverse_dns"`
	// Mode is one of CloudIPModes; "" means nat.
	Mode            string           `json:"mode"`
	PortTranslators []PortTranslator `json:"port_translators,omitempty"`
	// Target is what the cloud IP is mapped to: a load balancer
	// (lba-…), a server group (grp-…) or a server's interface (int-…; a
	// server's ID given to AddCloudIP maps to its interface); "" when
	// unmapped.
	Target string `json:"target,omitempty"`

	// pending is the load balancer the cloud IP is being mapped onto
	// (Options.MappingReads).
	pending string
}

// PortTranslator forwards one port of a cloud IP to another.
type PortTranslator struct {
	Incoming int `json:"incoming"`
	Outgoing int `json:"outgoing"`
	// Protocol is one of TransportProtocols.
	Protocol string `json:"protocol"`
}

func (c *CloudIP) clone() CloudIP {
	out := *c
	out.PortTranslators = slices.Clone(c.PortTranslators)
	return out
}

// AddCloudIP creates a cloud IP from c, mapped to c.Target if set, and
// returns it as stored; zero fields get the defaults their doc comments
// give. It panics on values the API would refuse: a test's mistake.
func (s *Server) AddCloudIP(c CloudIP) CloudIP {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.st
	if c.ID == "" {
		c.ID = st.newID("cip")
	}
	st.cipDefaults(&c)
	mustEnum("mode", c.Mode, CloudIPModes)
	target := c.Target
	c.Target, c.pending = "", ""
	stored := c.clone()
	st.cips.Put(c.ID, &stored)
	if target != "" {
		stored.Target = st.seedTarget(c.ID, target)
		st.mappedOnto(stored.Target)
	}
	return stored.clone()
}

// seedTarget is what a seeded cloud IP is mapped to: target, or a
// server's interface. Any load balancer will do, one being deleted too (as
// the existing CCM may leave it).
func (st *state) seedTarget(cipID, target string) string {
	if srv, ok := st.servers.Get(target); ok {
		return srv.Interface
	}
	_, lb := st.lbs.Get(target)
	_, grp := st.groups.Get(target)
	if lb || grp || st.serverByInterface(target) != nil {
		return target
	}
	panic(fmt.Sprintf("gbsim: cloud IP %s: no server, interface, load balancer or server group %s", cipID, target))
}

// cipDefaults gives a cloud IP the next free IPv4 address of the cloud's
// range (109.107.32.0/19) and the IPv6 address holding it.
func (st *state) cipDefaults(c *CloudIP) {
	if c.PublicIPv4 == "" {
		taken := map[string]bool{}
		for _, other := range st.cips.All() {
			taken[other.PublicIPv4] = true
		}
		for c.PublicIPv4 == "" || taken[c.PublicIPv4] {
			n := st.cipSeq % 8192
			st.cipSeq++
			c.PublicIPv4 = fmt.Sprintf("109.107.%d.%d", 32+n/256, n%256)
		}
	}
	if c.PublicIPv6 == "" {
		c.PublicIPv6 = ipv6For(c.PublicIPv4)
	}
	if c.FQDN == "" {
		c.FQDN = c.ID + ".gb1.brightbox.com"
	}
	if c.ReverseDNS == "" {
		c.ReverseDNS = "cip-" + strings.ReplaceAll(c.PublicIPv4, ".", "-") + ".gb1.brightbox.com"
	}
	if c.Mode == "" {
		c.Mode = "nat"
	}
}

// ipv6For is the IPv6 address of a cloud IP with IPv4 address ip, as
// Brightbox numbers them: 109.107.50.0 is 2a02:1348:ffff:ffff::6d6b:3200.
func ipv6For(ip string) string {
	a, err := netip.ParseAddr(ip)
	if err != nil || !a.Is4() {
		return ""
	}
	b := a.As4()
	return fmt.Sprintf("2a02:1348:ffff:ffff::%x:%x", uint16(b[0])<<8|uint16(b[1]), uint16(b[2])<<8|uint16(b[3]))
}

// CloudIPs returns the cloud IPs, oldest first.
func (s *Server) CloudIPs() []CloudIP {
	s.mu.Lock()
	defer s.mu.Unlock()
	return simkit.CloneAll(s.st.cips.All(), (*CloudIP).clone)
}

// cipRequest is the body of POST and PUT /1.0/cloud_ips.
type cipRequest struct {
	Name            *string           `json:"name"`
	ReverseDNS      *string           `json:"reverse_dns"`
	Mode            *string           `json:"mode"`
	PortTranslators *[]PortTranslator `json:"port_translators"`
}

func (req *cipRequest) apply(c *CloudIP) *simkit.Response {
	if req.Name != nil {
		c.Name = *req.Name
	}
	if req.ReverseDNS != nil {
		c.ReverseDNS = *req.ReverseDNS
	}
	if req.Mode != nil {
		if err := enumError("mode", *req.Mode, CloudIPModes); err != nil {
			resp := invalid("%s", err.Error())
			return &resp
		}
		c.Mode = *req.Mode
	}
	if req.PortTranslators != nil {
		for i, pt := range *req.PortTranslators {
			if err := enumError(fmt.Sprintf("port_translators[%d].protocol", i), pt.Protocol, TransportProtocols); err != nil {
				resp := invalid("%s", err.Error())
				return &resp
			}
			if !validPort(pt.Incoming) || !validPort(pt.Outgoing) {
				resp := invalid("port_translators[%d]: incoming and outgoing must be ports", i)
				return &resp
			}
		}
		c.PortTranslators = slices.Clone(*req.PortTranslators)
	}
	return nil
}

func (s *Server) listCloudIPs(r *http.Request) simkit.Response {
	return list(s.st.cips, s.readCloudIP(r))
}

func (s *Server) getCloudIP(r *http.Request) simkit.Response {
	return get(r, s.st.cips, s.readCloudIP(r))
}

// readCloudIP renders the cloud IPs r reads, counting each read (which
// may settle a mapping).
func (s *Server) readCloudIP(r *http.Request) func(*CloudIP) cipJSON {
	v := s.view(r)
	return func(c *CloudIP) cipJSON {
		s.st.mapping.Read(c.ID)
		return v.cip(c)
	}
}

func (s *Server) createCloudIP(r *http.Request) simkit.Response {
	var req cipRequest
	if resp := decode(r, &req, true); resp != nil {
		return *resp
	}
	if n, _ := s.st.used(); n >= s.opts.CloudIPsLimit {
		return limitReached("cloud IPs", s.opts.CloudIPsLimit)
	}
	c := CloudIP{ID: s.st.newID("cip")}
	if resp := req.apply(&c); resp != nil {
		return *resp
	}
	s.st.cipDefaults(&c)
	s.st.cips.Put(c.ID, &c)
	return created(s.view(r).cip(&c))
}

func (s *Server) updateCloudIP(r *http.Request) simkit.Response {
	c, found := s.st.cips.Get(r.PathValue("id"))
	if !found {
		return notFound()
	}
	var req cipRequest
	if resp := decode(r, &req, false); resp != nil {
		return *resp
	}
	next := c.clone()
	if resp := req.apply(&next); resp != nil {
		return *resp
	}
	*c = next
	return ok(s.view(r).cip(c))
}

func (s *Server) deleteCloudIP(r *http.Request) simkit.Response {
	c, found := s.st.cips.Get(r.PathValue("id"))
	if !found {
		return notFound()
	}
	if c.Target != "" || c.pending != "" {
		return conflict("Cloud IP %s is mapped; unmap it first", c.ID)
	}
	body := s.view(r).cip(c)
	s.st.cips.Del(c.ID)
	return accepted(body)
}

// destination resolves a map destination to what the cloud IP is mapped
// to (a server's ID to its interface), or the answer refusing it.
func (st *state) destination(dest string) (string, *simkit.Response) {
	refuse := func(resp simkit.Response) (string, *simkit.Response) { return "", &resp }
	prefix, _, _ := strings.Cut(dest, "-")
	switch prefix {
	case "srv":
		srv, ok := st.servers.Get(dest)
		if !ok || srv.Status == StatusDeleted {
			return refuse(invalid("destination: no server %s", dest))
		}
		return srv.Interface, nil
	case "int":
		if st.serverByInterface(dest) == nil {
			return refuse(invalid("destination: no interface %s", dest))
		}
		return dest, nil
	case "lba":
		lb, ok := st.lbs.Get(dest)
		switch {
		case !ok:
			return refuse(invalid("destination: no load balancer %s", dest))
		case gone(lb.Status):
			return refuse(conflict("Load balancer %s is %s", dest, lb.Status))
		}
		return dest, nil
	case "grp":
		if _, ok := st.groups.Get(dest); !ok {
			return refuse(invalid("destination: no server group %s", dest))
		}
		return dest, nil
	}
	return refuse(invalid("destination: %q is not a server, interface, load balancer or server group", dest))
}

func (s *Server) mapCloudIP(r *http.Request) simkit.Response {
	c, found := s.st.cips.Get(r.PathValue("id"))
	if !found {
		return notFound()
	}
	var req struct {
		Destination string `json:"destination"`
	}
	if resp := decode(r, &req, false); resp != nil {
		return *resp
	}
	dest, resp := s.st.destination(req.Destination)
	if resp != nil {
		return *resp
	}
	switch {
	case c.pending != "" && c.pending == dest:
		return accepted(s.view(r).cip(c)) // already on its way there
	case c.Target != "" || c.pending != "":
		return conflict("Cloud IP %s is already mapped", c.ID)
	}
	if strings.HasPrefix(dest, "lba-") {
		c.pending = dest
		s.st.mapping.Start(c.ID, func() {
			c.Target, c.pending = c.pending, ""
			s.st.mappedOnto(c.Target)
		})
	} else {
		c.Target = dest
	}
	return accepted(s.view(r).cip(c))
}

func (s *Server) unmapCloudIP(r *http.Request) simkit.Response {
	c, found := s.st.cips.Get(r.PathValue("id"))
	if !found {
		return notFound()
	}
	if c.Target == "" && c.pending == "" {
		return conflict("Cloud IP %s is not mapped", c.ID)
	}
	s.st.unmap(c)
	return accepted(s.view(r).cip(c))
}

// unmap unmaps c, or stops it being mapped.
func (st *state) unmap(c *CloudIP) {
	st.mapping.Stop(c.ID)
	c.Target, c.pending = "", ""
}

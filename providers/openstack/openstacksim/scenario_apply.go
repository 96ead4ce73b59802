package openstacksim

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// validate reports every problem with sc's settings and the fields of
// its resources.
func (sc *Scenario) validate() []error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if _, err := simkit.ParseDuration(sc.TokenTTL); err != nil {
		bad("tokenTTL: %v", err)
	}
	if sc.MaxLimit < 0 || sc.MaxRoutes < 0 || sc.OctaviaMinor < 0 {
		bad("maxLimit, maxRoutes and octaviaMinor must not be negative")
	}
	for i, u := range sc.Users {
		if u.Name == "" || u.Password == "" {
			bad("users[%d]: name and password are required", i)
		}
	}
	for i, a := range sc.ApplicationCredentials {
		if a.Secret == "" || a.ID == "" && a.Name == "" {
			bad("applicationCredentials[%d]: secret and an id or name are required", i)
		}
	}
	for i, n := range sc.Networks {
		if n.Name == "" {
			bad("networks[%d].name: required", i)
		}
		for j, sub := range n.Subnets {
			if _, err := netip.ParsePrefix(sub.CIDR); err != nil {
				bad("networks[%d].subnets[%d].cidr: %v", i, j, err)
			}
			if _, err := netip.ParseAddr(sub.Gateway); sub.Gateway != "" && err != nil {
				bad("networks[%d].subnets[%d].gateway: %v", i, j, err)
			}
		}
	}
	for i, r := range sc.Routers {
		if r.Name == "" {
			bad("routers[%d].name: required", i)
		}
	}
	for i, v := range sc.Servers {
		f := fmt.Sprintf("servers[%d]", i)
		if v.Name == "" {
			bad("%s.name: required", f)
		}
		if _, ok := findFlavor(cmpOr(v.Flavor, "m1.small")); !ok {
			bad("%s.flavor: unknown flavor %q", f, v.Flavor)
		}
		if v.Image != "" && !slices.ContainsFunc(Images, func(img Image) bool { return img.ID == v.Image || img.Name == v.Image }) {
			bad("%s.image: unknown image %q", f, v.Image)
		}
		if !slices.Contains([]string{"", StatusActive, StatusShutoff, StatusBuild, StatusError, StatusPaused}, v.Status) {
			bad("%s.status: %q is not one of ACTIVE, SHUTOFF, BUILD, ERROR, PAUSED", f, v.Status)
		}
	}
	for i, lb := range sc.LoadBalancers {
		f := fmt.Sprintf("loadBalancers[%d]", i)
		valid := []string{"", ProvisioningActive, ProvisioningError, ProvisioningPendingCreate, ProvisioningPendingUpdate}
		if !slices.Contains(valid, lb.Status) {
			bad("%s.status: %q is not one of ACTIVE, ERROR, PENDING_CREATE, PENDING_UPDATE", f, lb.Status)
		}
		for j, l := range lb.Listeners {
			if l.Pool != nil && len(l.Pool.Members) > 0 && l.Pool.MemberPort == 0 {
				bad("%s.listeners[%d].pool.memberPort: required with members", f, j)
			}
		}
	}
	if sc.MaxDiskDevices < 0 || sc.VolumeQuotas.Volumes < -1 || sc.VolumeQuotas.Snapshots < -1 || sc.VolumeQuotas.Gigabytes < -1 {
		bad("maxDiskDevices must not be negative, volumeQuotas not below -1")
	}
	for i, vt := range sc.VolumeTypes {
		if vt.Name == "" {
			bad("volumeTypes[%d].name: required", i)
		}
	}
	for i, v := range sc.Volumes {
		if v.Size < 0 {
			bad("volumes[%d].size: must not be negative", i)
		}
	}
	return errs
}

// Apply adds sc's networks, routers, servers, load balancers and volumes
// to s.
func (sc *Scenario) Apply(s *Server) error {
	for _, n := range sc.Networks {
		net := s.AddNetwork(Network{ID: n.ID, Name: n.Name, External: n.External})
		for _, sub := range n.Subnets {
			s.AddSubnet(Subnet{ID: sub.ID, Name: cmpOr(sub.Name, n.Name+"-subnet"), NetworkID: net.ID, CIDR: sub.CIDR, GatewayIP: sub.Gateway})
		}
	}
	for _, r := range sc.Routers {
		if err := s.applyRouter(r); err != nil {
			return err
		}
	}
	for _, v := range sc.Servers {
		ns := NovaServer{ID: v.ID, Name: v.Name, Flavor: v.Flavor, Image: v.Image, AZ: v.AZ, Status: v.Status, Tags: v.Tags, Metadata: v.Metadata}
		for _, p := range v.Ports {
			ns.Ports = append(ns.Ports, ServerPort{Network: p.Network, FixedIPs: p.FixedIPs, FloatingIP: p.FloatingIP})
		}
		s.mu.Lock()
		_, err := s.addServer(ns)
		s.mu.Unlock()
		if err != nil {
			return err
		}
	}
	for _, lb := range sc.LoadBalancers {
		if _, err := s.AddLoadBalancer(lb); err != nil {
			return err
		}
	}
	for _, v := range sc.Volumes {
		vol := Volume{ID: v.ID, Name: v.Name, Size: v.Size, VolumeType: v.Type, AZ: v.AZ, Metadata: v.Metadata}
		if v.Server != "" {
			id := v.Server
			for _, srv := range s.Servers() {
				if srv.Name == v.Server {
					id = srv.ID
				}
			}
			vol.Attachments = []VolumeAttachment{{ServerID: id}}
		}
		if _, err := s.AddVolume(vol); err != nil {
			return err
		}
	}
	return nil
}

func (s *Server) applyRouter(r ScenarioRouter) error {
	s.mu.Lock()
	gw := ""
	if r.Gateway != "" {
		if gw = s.networkByRef(r.Gateway); gw == "" {
			s.mu.Unlock()
			return fmt.Errorf("router %s: no network %q", r.Name, r.Gateway)
		}
	}
	var subnets []string
	for _, ref := range r.Subnets {
		sr := s.subnetByRef(ref)
		if sr == nil {
			s.mu.Unlock()
			return fmt.Errorf("router %s: no subnet %q", r.Name, ref)
		}
		subnets = append(subnets, sr.ID)
	}
	s.mu.Unlock()
	rt := s.AddRouter(Router{ID: r.ID, Name: r.Name}, gw, subnets...)
	if len(r.Routes) == 0 {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	rec, _ := s.st.routers.Get(rt.ID)
	routes := dedupRoutes(r.Routes)
	if errResp := s.checkRoutes(rec, routes); errResp != nil {
		return fmt.Errorf("router %s: routes: %v", r.Name, errResp.Body)
	}
	rec.Routes = routes
	return nil
}

// subnetByRef resolves a subnet ID or name.
func (s *Server) subnetByRef(ref string) *subnetRec {
	if sr, ok := s.st.subnets.Get(ref); ok {
		return sr
	}
	sr, _ := s.st.subnets.Find(func(sr *subnetRec) bool { return sr.Name == ref })
	return sr
}

// AddLoadBalancer creates a load balancer as if someone had made it
// earlier, settled to spec.Status (default ACTIVE), and returns it.
func (s *Server) AddLoadBalancer(spec ScenarioLoadBalancer) (LoadBalancer, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sr := s.subnetByRef(cmpOr(spec.Subnet, s.st.defaults.SubnetID))
	if sr == nil {
		return LoadBalancer{}, fmt.Errorf("load balancer %s: no subnet %q", spec.Name, spec.Subnet)
	}
	req := &lbCreate{Name: spec.Name, VipSubnetID: sr.ID, Provider: spec.Provider, Tags: spec.Tags}
	for _, l := range spec.Listeners {
		lc := listenerCreate{Protocol: l.Protocol, ProtocolPort: l.Port, AllowedCIDRs: l.AllowedCIDRs, Tags: spec.Tags}
		if p := l.Pool; p != nil {
			pc, err := s.scenarioPool(l.Protocol, p)
			if err != nil {
				return LoadBalancer{}, fmt.Errorf("load balancer %s: %w", spec.Name, err)
			}
			lc.DefaultPool = pc
		}
		req.Listeners = append(req.Listeners, lc)
	}
	_, lb, errResp := s.createLB(req)
	if errResp != nil {
		return LoadBalancer{}, fmt.Errorf("load balancer %s: %v", spec.Name, errResp.Body)
	}
	switch spec.Status {
	case "", ProvisioningActive:
		s.settle(lb)
	case ProvisioningError:
		s.settle(lb)
		lb.ProvisioningStatus = ProvisioningError
		s.refreshOperating(lb)
	case ProvisioningPendingUpdate:
		s.settle(lb)
		s.pend(lb, ProvisioningPendingUpdate)
	}
	return s.lbView(lb), nil
}

func (s *Server) scenarioPool(listenerProtocol string, p *ScenarioPool) (*poolCreate, error) {
	proto := p.Protocol
	if proto == "" {
		proto = map[string]string{"TERMINATED_HTTPS": "HTTP"}[listenerProtocol]
		proto = cmpOr(proto, listenerProtocol)
	}
	pc := &poolCreate{Protocol: strings.ToUpper(proto), LBAlgorithm: cmpOr(p.Algorithm, "ROUND_ROBIN")}
	for _, ref := range p.Members {
		addr := ref
		if _, err := netip.ParseAddr(ref); err != nil {
			addr = ""
			for _, v := range s.st.servers.All() {
				if v.Name == ref {
					addr = s.serverView(v).Ports[0].FixedIPs[0]
				}
			}
			if addr == "" {
				return nil, fmt.Errorf("member %q is neither an address nor a server", ref)
			}
		}
		m := memberCreate{Address: addr, ProtocolPort: p.MemberPort}
		if sr := s.st.subnetContaining("", addr); sr != nil {
			m.SubnetID = sr.ID
		}
		pc.Members = append(pc.Members, m)
	}
	if p.Monitor != "" {
		pc.HealthMonitor = &monitorCreate{Type: p.Monitor, Delay: 5, Timeout: 3, MaxRetries: 1}
	}
	return pc, nil
}

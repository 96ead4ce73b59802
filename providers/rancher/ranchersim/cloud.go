package ranchersim

import (
	"maps"
	"slices"
	"strings"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// Cloud is the simulator as a simkit.Cloud, through which the conformance
// suite (frameworktest.SimCloud), the end-to-end suite, the demo and the
// benchmarks drive every provider's simulated cloud alike. It is the
// Server, with the provider-neutral methods on top. Instances are hosts,
// named by their UUID (the providerID is rancher://<uuid>). The Rancher
// provider is configured by its environment, and Cattle has no route API
// (its managed network is an overlay).
type Cloud struct {
	*Server
	simkit.NoCloudConfig
	simkit.NoRoutes
}

var _ simkit.Cloud = (*Cloud)(nil)

// Cloud returns the server as a simkit.Cloud.
func (s *Server) Cloud() *Cloud { return &Cloud{Server: s} }

// StartCloud starts a simulated Cattle with c's settings (the defaults for
// the rest) on a loopback port; Close stops it.
func StartCloud(c simkit.Common) *Cloud { return simkit.Started(New(Options{Common: c})).Cloud() }

// AddInstance adds an active host whose hostname is name, with a private
// agent IP and a public IP in its ipAddresses (AddHost's defaults), labelled
// with its region and zone as docs/rancher's set-up asks of a host no
// machine driver made, and returns its UUID.
func (c *Cloud) AddInstance(name string) string {
	labels := map[string]string{"topology.kubernetes.io/region": "sim-1", "topology.kubernetes.io/zone": "sim-1a"}
	return c.AddHost(Host{Hostname: name, Labels: labels}).UUID
}

// OtherAccount implements simkit.Accounts with another environment
// (OtherEnvironment): its CATTLE_URL (another project ID),
// CATTLE_ACCESS_KEY and CATTLE_SECRET_KEY.
func (c *Cloud) OtherAccount() simkit.Credentials {
	return simkit.Credentials{Env: c.OtherEnvironment().Env(c.URL())}
}

// RotateSecret gives the environment API key of Options (the one Env
// names) a new secret: the old one is refused from now on, as after a
// user replaces the key's secret in Rancher (frameworktest.SecretRotator).
func (c *Cloud) RotateSecret(secret string) { c.AddAPIKey(c.opts.AccessKey, secret) }

// hostID returns the ID of the host with uuid.
func (c *Cloud) hostID(uuid string) (string, bool) {
	for _, h := range c.Hosts() {
		if h.UUID == uuid {
			return h.ID, true
		}
	}
	return "", false
}

// DeleteInstance removes the host with the UUID (RemoveHost: removed now,
// purged after its reads or the next Advance).
func (c *Cloud) DeleteInstance(uuid string) {
	if id, ok := c.hostID(uuid); ok {
		c.RemoveHost(id)
	}
}

// ShutdownInstance makes the host with the UUID inactive, as a user
// deactivating it does.
func (c *Cloud) ShutdownInstance(uuid string) {
	if id, ok := c.hostID(uuid); ok {
		c.SetHostState(id, StateInactive)
	}
}

// Env is what the Rancher provider needs to reach the cloud.
func (c *Cloud) Env() map[string]string { return c.Server.Env(c.URL()) }

// LoadBalancers lists the load balancer services neither removed nor
// being removed, oldest first: listeners from their port rules
// ("TCP:80->:30080", source port to target port), members the UUIDs of
// the hosts whose agent IP (or another of their addresses) the IPs of
// the external services it links to or its port rules name, and
// addresses the IPs of its publicEndpoints (the agent IPs of the hosts it
// runs on, while it runs), as the provider reports them.
func (c *Cloud) LoadBalancers() []simkit.LoadBalancer {
	c.mu.Lock()
	defer c.mu.Unlock()
	byIP := map[string]string{}
	for _, h := range c.st.hosts.All() {
		for _, ip := range h.IPAddresses {
			byIP[ip.Address] = h.UUID
		}
		byIP[h.AgentIPAddress] = h.UUID
	}
	// The load balancers of a cluster share one external service: their
	// members are worked out once per set of backends, and shared.
	membersOf := map[string][]string{}
	var out []simkit.LoadBalancer
	for _, svc := range c.st.services.All() {
		if !liveLB(svc) {
			continue
		}
		lb := simkit.LoadBalancer{ID: svc.ID, Name: svc.Name}
		for _, e := range c.st.endpoints(svc) {
			lb.Addresses = append(lb.Addresses, e.IPAddress)
		}
		slices.Sort(lb.Addresses)
		lb.Addresses = slices.Compact(lb.Addresses)
		var backends []string
		for _, l := range svc.Links {
			backends = append(backends, l.ServiceID)
		}
		if svc.LBConfig != nil {
			for _, pr := range svc.LBConfig.PortRules {
				lb.Listeners = append(lb.Listeners, simkit.FormatListener(pr.Protocol, pr.SourcePort, pr.TargetPort))
				if pr.ServiceID != "" {
					backends = append(backends, pr.ServiceID)
				}
			}
		}
		slices.Sort(lb.Listeners)
		lb.Listeners = slices.Compact(lb.Listeners)
		slices.Sort(backends)
		backends = slices.Compact(backends)
		key := strings.Join(backends, ",")
		members, done := membersOf[key]
		if !done {
			members = c.st.members(backends, byIP)
			membersOf[key] = members
		}
		lb.Members = members
		out = append(out, lb)
	}
	return out
}

// members are the UUIDs of the hosts (byIP: by any of their addresses)
// that the live external services of backends name, sorted.
func (st *state) members(backends []string, byIP map[string]string) []string {
	set := map[string]bool{}
	for _, id := range backends {
		target, ok := st.services.Get(id)
		if !ok || target.Removed != nil {
			continue
		}
		for _, ip := range target.ExternalIPAddresses {
			if uuid, ok := byIP[ip]; ok {
				set[uuid] = true
			}
		}
	}
	if len(set) == 0 {
		return nil
	}
	return slices.Sorted(maps.Keys(set))
}

// liveLB reports whether svc is a load balancer neither removed nor being
// removed.
func liveLB(svc *Service) bool {
	return svc.Kind == KindLoadBalancer && svc.Removed == nil && svc.State != StateRemoving
}

package openstacksim

import (
	"regexp"
	"slices"
	"strings"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

var _ simkit.CompanionLister = (*Cloud)(nil)

// Companions lists what the OpenStack CCM creates beside its Octavia load
// balancers, as "<kind>/<id>" with the ID of the load balancer each
// serves ("" for none):
//
//   - "floatingip/<id>": a floating IP on a load balancer's VIP port serves
//     it, as Neutron holds it (port_id); one on no port, or on a port that
//     is no live VIP (a user's VIP port left after its load balancer),
//     serves none. One on a server's port is a server's and is left out.
//   - "securitygroup/<id>": a Service's node security group
//     ([LoadBalancer] manage-security-groups), which Neutron ties to the
//     member servers' ports, never to a load balancer. So this goes by the
//     names the provider writes, the only record there is: the group is
//     named lb-sg-<uid>-<namespace>-<name>, and its description (OCCM's)
//     names the Service and the cluster, whose load balancer is the one
//     named, or tagged when shared, kube_service_<cluster>_<namespace>_<name>.
//
// A load balancer in PENDING_DELETE still exists and still counts.
func (c *Cloud) Companions() map[string]string {
	s := c.Server
	s.mu.Lock()
	defer s.mu.Unlock()
	byVIP := map[string]string{}
	for _, lb := range s.st.lbs.All() {
		if lb.VipPortID != "" {
			byVIP[lb.VipPortID] = lb.ID
		}
	}
	out := map[string]string{}
	for _, f := range s.st.floatingIPs.All() {
		if !s.onServer(f) {
			out["floatingip/"+f.ID] = byVIP[f.PortID]
		}
	}
	for _, sg := range s.st.securityGroups.All() {
		if secGroupName.MatchString(sg.Name) {
			out["securitygroup/"+sg.ID] = s.lbNamed(serviceLBName(sg.Description))
		}
	}
	return out
}

// onServer reports whether f is on a server's port.
func (s *Server) onServer(f *FloatingIP) bool {
	p, ok := s.st.ports.Get(f.PortID)
	return ok && strings.HasPrefix(p.DeviceOwner, "compute:")
}

var (
	// secGroupName is how the provider names a Service's security group:
	// lb-sg-<Service UID>-<namespace>-<name>.
	secGroupName = regexp.MustCompile(`^lb-sg-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}-`)
	// secGroupDescription is OCCM's description of it.
	secGroupDescription = regexp.MustCompile(`^Security Group for ([^/]+)/(.+) Service LoadBalancer in cluster (.*)$`)
)

// serviceLBName is the load-balancer name (OCCM's
// kube_service_<cluster>_<namespace>_<name>, at most 255 bytes) of the
// Service a security group's description names, "" when it names none.
func serviceLBName(description string) string {
	m := secGroupDescription.FindStringSubmatch(description)
	if m == nil {
		return ""
	}
	name := "kube_service_" + m[3] + "_" + m[1] + "_" + m[2]
	return name[:min(len(name), 255)]
}

// lbNamed is the ID of the load balancer called name or tagged with it (a
// Service sharing another's load balancer is on its tags), one not being
// deleted first; "" when there is none.
func (s *Server) lbNamed(name string) string {
	if name == "" {
		return ""
	}
	id := ""
	for _, lb := range s.st.lbs.All() {
		if lb.Name != name && !slices.Contains(lb.Tags, name) {
			continue
		}
		if lb.ProvisioningStatus != ProvisioningPendingDelete {
			return lb.ID
		}
		id = lb.ID
	}
	return id
}

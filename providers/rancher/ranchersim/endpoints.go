package ranchersim

import (
	"fmt"
	"regexp"
	"strconv"
)

// LabelGlobal is the launch config label that runs a service on every
// active host (a "global" service) instead of Scale hosts.
const LabelGlobal = "io.rancher.scheduler.global"

// endpointDoc is a public endpoint (go-rancher's PublicEndpoint): a port a
// service's container publishes on a host.
type endpointDoc struct {
	Type       string `json:"type"`
	IPAddress  string `json:"ipAddress"`
	Port       int    `json:"port"`
	HostID     string `json:"hostId"`
	InstanceID string `json:"instanceId"`
	ServiceID  string `json:"serviceId"`
}

// Endpoint is a load balancer's public endpoint: a host's agent IP and a
// published port.
type Endpoint struct {
	IPAddress string `json:"ipAddress"`
	Port      int    `json:"port"`
	HostID    string `json:"hostId"`
}

// portSpec is a launch config port: "[ip:][public:]private[/tcp|udp]".
var portSpec = regexp.MustCompile(`^(?:(\d{1,3}(?:\.\d{1,3}){3}):)?(?:(\d+):)?(\d+)(?:/(tcp|udp))?$`)

// parsePort reads a launch config port; public is 0 for a port that is
// not published.
func parsePort(spec string) (public, private int, protocol string, err error) {
	m := portSpec.FindStringSubmatch(spec)
	if m == nil {
		return 0, 0, "", fmt.Errorf("%q is not [ip:][public:]private[/tcp|udp]", spec)
	}
	private, _ = strconv.Atoi(m[3])
	if m[2] != "" {
		public, _ = strconv.Atoi(m[2])
	}
	protocol = m[4]
	if protocol == "" {
		protocol = "tcp"
	}
	if private < 1 || private > 65535 || m[2] != "" && (public < 1 || public > 65535) {
		return 0, 0, "", fmt.Errorf("%q has a port out of 1-65535", spec)
	}
	return public, private, protocol, nil
}

// running reports whether a service's containers run (and publish their
// ports) in state.
func running(state string) bool {
	switch state {
	case StateActive, StateUpdatingActive, StateUpgrading, StateUpgraded, StateFinishingUpgrade,
		StateRollingBack, StateRestarting, StateCancelingUpgrade, StateCanceledUpgrade:
		return true
	}
	return false
}

// placement is the hosts a load balancer's containers run on: every
// active host for a global one, else the first Scale active hosts (oldest
// first).
func (st *state) placement(svc *Service) []*Host {
	lc := svc.runningConfig()
	global := lc != nil && lc.Labels[LabelGlobal] == "true"
	scale := max(svc.Scale, 1)
	var hosts []*Host
	for h := range st.hosts.Values() { // a list of 1,000 LBs reads each one's
		if h.State == StateActive {
			hosts = append(hosts, h)
			if !global && len(hosts) == scale {
				break
			}
		}
	}
	return hosts
}

// runningConfig is the launch config the service's containers run: the
// previous one while an upgrade is starting.
func (svc *Service) runningConfig() *LaunchConfig {
	if svc.State == StateUpgrading && svc.Upgrade != nil && svc.Upgrade.InServiceStrategy != nil {
		return svc.Upgrade.InServiceStrategy.PreviousLaunchConfig
	}
	return svc.LaunchConfig
}

// endpoints are a load balancer's public endpoints: one per host it runs
// on and published port, while it runs.
func (st *state) endpoints(svc *Service) []Endpoint {
	if svc.Kind != KindLoadBalancer || !running(svc.State) || svc.Removed != nil {
		return nil
	}
	lc := svc.runningConfig()
	if lc == nil {
		return nil
	}
	var out []Endpoint
	for _, h := range st.placement(svc) {
		for _, p := range lc.Ports {
			if public, _, _, err := parsePort(p); err == nil && public > 0 {
				out = append(out, Endpoint{IPAddress: h.AgentIPAddress, Port: public, HostID: h.ID})
			}
		}
	}
	return out
}

// instanceID is the ID of a service's container on a host, derived from
// both.
func instanceID(serviceID, hostID string) string {
	return prefixInstance + strconv.Itoa(int(crc(serviceID+"/"+hostID)%100000))
}

func crc(s string) uint32 {
	var h uint32 = 2166136261
	for i := 0; i < len(s); i++ {
		h = (h ^ uint32(s[i])) * 16777619
	}
	return h
}

func (v view) endpointDocs(svcID string, eps []Endpoint) []endpointDoc {
	out := make([]endpointDoc, 0, len(eps))
	for _, e := range eps {
		out = append(out, endpointDoc{Type: "publicEndpoint", IPAddress: e.IPAddress, Port: e.Port, HostID: e.HostID,
			InstanceID: instanceID(svcID, e.HostID), ServiceID: svcID})
	}
	return out
}

// hostEndpoints are the public endpoints on a host, in the order of the
// services they belong to. A request indexes every load balancer's
// endpoints by host once, at the first host it answers (the state does
// not change during a request: the handler holds its lock). Computed for
// each host, a host list cost every load balancer's placement for each
// host: a page of 1,000 hosts beside 200 load balancers took 15 s, so the
// provider's host lists timed out, and a node joining waited for a list
// that happened to finish (the benchmark's (d) took 22 s or 166 s).
func (v view) hostEndpoints(st *state, hostID string) []endpointDoc {
	idx := v.hostEPs
	if idx == nil {
		idx = &hostEndpointIndex{}
	}
	if idx.byHost == nil {
		idx.byHost = map[string][]endpointDoc{}
		for _, svc := range st.services.All() {
			for _, e := range st.endpoints(svc) {
				idx.byHost[e.HostID] = append(idx.byHost[e.HostID], v.endpointDocs(svc.ID, []Endpoint{e})...)
			}
		}
	}
	return append([]endpointDoc{}, idx.byHost[hostID]...)
}

// hostEndpointIndex is a request's public endpoints by host ID, built at
// its first hostEndpoints.
type hostEndpointIndex struct {
	byHost map[string][]endpointDoc
}

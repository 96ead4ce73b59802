package openstacksim

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

func (s *Server) octaviaRoutes() {
	for _, p := range []string{lbPrefix, lbPrefix + "/{$}"} {
		s.Handle("GET "+p, s.octaviaVersions, simkit.NoAuth)
	}
	// GET on the version's root and on lbaas answers the JSON string
	// "v2", as Octavia's V2 controllers do.
	for _, p := range []string{lbPrefix + "/v2", lbV2, lbV2 + "/{$}", lbaas, lbaas + "/{$}"} {
		s.Handle("GET "+p, func(*http.Request) response { return jsonOK("v2") })
	}
	// Octavia serves its API under /v2 as under /v2.0; the version
	// document links to /v2.
	s.HandleFunc(lbPrefix+"/v2/", s.rewrite(lbPrefix+"/v2", lbV2))
	// Its version root serves every lbaas resource without the lbaas too
	// (octavia/api/v2/controllers/__init__.py: V2Controller is a
	// BaseV2Controller); gophercloud's quotas use /v2.0/quotas.
	for _, c := range []string{"loadbalancers", "listeners", "pools", "healthmonitors", "quotas", "providers", "flavors", "availabilityzones"} {
		for _, p := range []string{"/" + c, "/" + c + "/"} {
			s.HandleFunc(lbV2+p, s.rewrite(lbV2, lbaas))
		}
	}
	l := lbaas
	s.Handle("GET "+l+"/loadbalancers", s.listLoadBalancers)
	s.Handle("POST "+l+"/loadbalancers", s.createLoadBalancer)
	s.Handle("GET "+l+"/loadbalancers/{id}", s.getLoadBalancer)
	s.Handle("PUT "+l+"/loadbalancers/{id}", s.updateLoadBalancer)
	s.Handle("DELETE "+l+"/loadbalancers/{id}", s.deleteLoadBalancer)
	s.Handle("GET "+l+"/loadbalancers/{id}/status", s.loadBalancerStatus)
	s.Handle("GET "+l+"/loadbalancers/{id}/stats", s.loadBalancerStats)
	s.Handle("GET "+l+"/listeners", s.listListeners)
	s.Handle("POST "+l+"/listeners", s.createListener)
	s.Handle("GET "+l+"/listeners/{id}", s.getListener)
	s.Handle("PUT "+l+"/listeners/{id}", s.updateListener)
	s.Handle("DELETE "+l+"/listeners/{id}", s.deleteListener)
	s.Handle("GET "+l+"/listeners/{id}/stats", s.listenerStats)
	s.Handle("GET "+l+"/pools", s.listPools)
	s.Handle("POST "+l+"/pools", s.createPool)
	s.Handle("GET "+l+"/pools/{id}", s.getPool)
	s.Handle("PUT "+l+"/pools/{id}", s.updatePool)
	s.Handle("DELETE "+l+"/pools/{id}", s.deletePool)
	s.Handle("GET "+l+"/pools/{id}/members", s.listMembers)
	s.Handle("POST "+l+"/pools/{id}/members", s.createMember)
	s.Handle("PUT "+l+"/pools/{id}/members", s.batchUpdateMembers)
	s.Handle("GET "+l+"/pools/{id}/members/{mid}", s.getMember)
	s.Handle("PUT "+l+"/pools/{id}/members/{mid}", s.updateMember)
	s.Handle("DELETE "+l+"/pools/{id}/members/{mid}", s.deleteMember)
	s.Handle("GET "+l+"/healthmonitors", s.listMonitors)
	s.Handle("POST "+l+"/healthmonitors", s.createMonitor)
	s.Handle("GET "+l+"/healthmonitors/{id}", s.getMonitor)
	s.Handle("PUT "+l+"/healthmonitors/{id}", s.updateMonitor)
	s.Handle("DELETE "+l+"/healthmonitors/{id}", s.deleteMonitor)
	s.Handle("GET "+l+"/providers", s.listProviders)
	s.Handle("GET "+l+"/quotas", s.listOctaviaQuotas)
	s.Handle("GET "+l+"/quotas/{project_id}", s.getOctaviaQuota)
	s.Handle("GET "+l+"/quotas/{project_id}/default", s.getOctaviaQuotaDefaults)
	for _, m := range []string{"PUT", "DELETE"} {
		s.Handle(m+" "+l+"/quotas/{project_id}", func(*http.Request) response { return octaviaForbidden() })
	}
	s.Handle("GET "+l+"/flavors", func(r *http.Request) response { return s.octaviaList(r, "flavors", nil) })
	s.Handle("GET "+l+"/availabilityzones", func(r *http.Request) response { return s.octaviaList(r, "availability_zones", nil) })
}

// rewrite serves a request for a path under from as the same request
// under to; Octavia's links repeat the path the client asked for.
func (s *Server) rewrite(from, to string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		if _, rewritten := ctx.Value(origPathKey{}).(string); !rewritten {
			ctx = withOrigPath(ctx, r.URL.Path)
		}
		r2 := r.Clone(ctx)
		r2.URL.Path, r2.URL.RawPath = to+strings.TrimPrefix(r.URL.Path, from), ""
		s.Handler().ServeHTTP(w, r2)
	}
}

// octaviaVersionDates are the updated timestamps of Octavia's API
// versions v2.0 … v2.26, as its root controller lists them.
var octaviaVersionDates = []string{
	"2016-12-11", "2018-04-20", "2018-07-31", "2018-12-18", "2018-12-19", "2019-01-21", "2019-01-25",
	"2018-01-25T12", "2019-02-12", "2019-03-04", "2019-03-05", "2019-06-24", "2019-09-11", "2019-09-13",
	"2019-11-10", "2020-03-10", "2020-03-15", "2020-04-29", "2020-04-29T01", "2020-05-12", "2020-08-02",
	"2020-09-03", "2020-09-04", "2020-09-07", "2020-10-15", "2021-10-02", "2022-08-29",
}

// octaviaVersions lists v2.0 … v2.<OctaviaMinor>, the newest CURRENT, the
// others SUPPORTED, each linking to /v2, as Octavia's root does; clients
// gate features on it.
func (s *Server) octaviaVersions(r *http.Request) response {
	href := simkit.BaseURL(r) + lbPrefix + "/v2"
	var versions []map[string]any
	for minor := 0; minor <= s.opts.OctaviaMinor; minor++ {
		status := "SUPPORTED"
		if minor == s.opts.OctaviaMinor {
			status = "CURRENT"
		}
		date := octaviaVersionDates[min(minor, len(octaviaVersionDates)-1)]
		if !strings.Contains(date, "T") {
			date += "T00"
		}
		versions = append(versions, map[string]any{
			"id": fmt.Sprintf("v2.%d", minor), "status": status, "updated": date + ":00:00Z",
			"links": []link{{Rel: "self", Href: href}},
		})
	}
	return jsonOK(map[string]any{"versions": versions})
}

// providers are Octavia's enabled provider drivers.
var providers = map[string]string{
	"amphora": "The Octavia Amphora driver.",
	"octavia": "Deprecated alias of the Octavia Amphora driver.",
	"ovn":     "Octavia OVN driver.",
}

func (s *Server) listProviders(*http.Request) response {
	out := []map[string]string{}
	for _, name := range []string{"amphora", "octavia", "ovn"} {
		out = append(out, map[string]string{"name": name, "description": providers[name]})
	}
	return jsonOK(map[string]any{"providers": out})
}

// octaviaList filters (unknown attributes are ignored), pages and
// projects items. hidden attributes are there for filtering only (e.g.
// loadbalancer_id on listeners) and removed from the answer.
func (s *Server) octaviaList(r *http.Request, plural string, items []map[string]any, hidden ...string) response {
	q := r.URL.Query()
	kept, _ := filter(q, items, false)
	p, errResp := s.octaviaPage(r, items, kept)
	if errResp != nil {
		return *errResp
	}
	for _, m := range p.items {
		for _, h := range hidden {
			delete(m, h)
		}
	}
	p.items = project(q, p.items)
	return jsonOK(octaviaListBody(plural, p))
}

// lbView is a load balancer with its listeners and pools.
func (s *Server) lbView(lb *lbRec) LoadBalancer {
	v := lb.clone()
	v.Listeners, v.Pools = []IDRef{}, []IDRef{}
	for _, l := range s.st.listeners.In(lb.ID) {
		v.Listeners = append(v.Listeners, IDRef{l.ID})
	}
	for _, p := range s.st.pools.In(lb.ID) {
		v.Pools = append(v.Pools, IDRef{p.ID})
	}
	return v
}

func (s *Server) lbJSON(lb *lbRec) map[string]any {
	m := nullIfEmpty(toMap(s.lbView(lb)), "updated_at", "flavor_id", "availability_zone")
	m["tenant_id"], m["vip_qos_policy_id"], m["additional_vips"] = lb.ProjectID, nil, []any{}
	return m
}

func (s *Server) listenerJSON(l *Listener) map[string]any {
	m := nullIfEmpty(toMap(l), "updated_at", "default_pool_id", "default_tls_container_ref")
	delete(m, "loadbalancer_id")
	m["loadbalancers"] = []IDRef{{l.LoadBalancerID}}
	m["l7policies"], m["tenant_id"], m["tls_ciphers"], m["tls_versions"], m["alpn_protocols"] = []any{}, l.ProjectID, nil, nil, nil
	m["client_authentication"], m["client_ca_tls_container_ref"], m["client_crl_container_ref"] = "NONE", nil, nil
	if l.AllowedCIDRs == nil {
		m["allowed_cidrs"] = nil
	}
	return m
}

func (s *Server) poolJSON(p *Pool) map[string]any {
	m := nullIfEmpty(toMap(p), "updated_at")
	delete(m, "loadbalancer_id")
	m["loadbalancers"] = []IDRef{{p.LoadBalancerID}}
	listeners, members := []IDRef{}, []IDRef{}
	for _, l := range s.st.listeners.In(p.LoadBalancerID) {
		if l.DefaultPoolID == p.ID {
			listeners = append(listeners, IDRef{l.ID})
		}
	}
	for _, mem := range s.st.members.In(p.ID) {
		members = append(members, IDRef{mem.ID})
	}
	m["listeners"], m["members"], m["healthmonitor_id"] = listeners, members, nil
	if hm := s.poolMonitor(p.ID); hm != nil {
		m["healthmonitor_id"] = hm.ID
	}
	m["tenant_id"], m["tls_enabled"], m["tls_container_ref"], m["ca_tls_container_ref"], m["crl_container_ref"] = p.ProjectID, false, nil, nil, nil
	return m
}

// poolFullJSON is a pool with its members and health monitor (null for
// none) in full, as a fully populated create answers.
func (s *Server) poolFullJSON(p *Pool) map[string]any {
	m := s.poolJSON(p)
	members := []map[string]any{}
	for _, mem := range s.st.members.In(p.ID) {
		members = append(members, memberJSON(mem))
	}
	m["members"], m["healthmonitor"] = members, nil
	if hm := s.poolMonitor(p.ID); hm != nil {
		m["healthmonitor"] = monitorJSON(hm)
	}
	return m
}

// memberJSON is a member as the API shows it. It is built directly, as
// toMap would make it (numbers float64, lists []any): a pool's members are
// listed on every sync of its load balancer, and a JSON round trip per
// member made a list of 5,000 take 0.4 s under the simulator's lock.
func memberJSON(mem *Member) map[string]any {
	tags := make([]any, len(mem.Tags))
	for i, t := range mem.Tags {
		tags[i] = t
	}
	var nilTags any = tags
	if mem.Tags == nil {
		nilTags = nil
	}
	m := map[string]any{
		"id": mem.ID, "name": mem.Name, "project_id": mem.ProjectID, "address": mem.Address,
		"protocol_port": float64(mem.ProtocolPort), "subnet_id": mem.SubnetID, "weight": float64(mem.Weight),
		"backup": mem.Backup, "admin_state_up": mem.AdminStateUp, "monitor_address": mem.MonitorAddress,
		"monitor_port": float64(mem.MonitorPort), "tags": nilTags, "provisioning_status": mem.ProvisioningStatus,
		"operating_status": mem.OperatingStatus, "created_at": mem.CreatedAt, "updated_at": mem.UpdatedAt,
		"tenant_id": mem.ProjectID, "vnic_type": "normal",
	}
	return nullIfEmpty(m, "updated_at", "subnet_id", "monitor_address", "monitor_port")
}

func monitorJSON(hm *HealthMonitor) map[string]any {
	m := nullIfEmpty(toMap(hm), "updated_at", "http_method", "url_path", "expected_codes", "domain_name", "http_version")
	delete(m, "pool_id")
	m["pools"], m["tenant_id"] = []IDRef{{hm.PoolID}}, hm.ProjectID
	return m
}

// poolMonitor is the pool's health monitor, nil if it has none.
func (s *Server) poolMonitor(poolID string) *HealthMonitor {
	for _, hm := range s.st.monitors.In(poolID) {
		return hm
	}
	return nil
}

// lbOf is the load balancer a child belongs to.
func (s *Server) lbOf(id string) *lbRec {
	lb, _ := s.st.lbs.Get(id)
	return lb
}

func isPending(status string) bool { return strings.HasPrefix(status, "PENDING_") }

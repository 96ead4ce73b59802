package openstacksim

import "net/http"

// Statistics: GET …/loadbalancers/{id}/stats and …/listeners/{id}/stats
// answer {"stats": {bytes_in, bytes_out, active_connections,
// total_connections, request_errors}} (Octavia api-ref "Get Load Balancer
// statistics", "Get Listener statistics"; octavia/api/v2/types
// LoadBalancerStatisticsResponse, ListenerStatisticsResponse), a load
// balancer's the sums over its listeners (octavia/common/stats.py). No
// traffic reaches the simulated load balancers, so every count is 0. A
// statistics request is not a read that settles a pending load balancer.

func zeroStats() map[string]any {
	return map[string]any{"stats": map[string]int{
		"bytes_in": 0, "bytes_out": 0, "active_connections": 0, "total_connections": 0, "request_errors": 0,
	}}
}

func (s *Server) loadBalancerStats(r *http.Request) response {
	if _, ok := s.st.lbs.Get(r.PathValue("id")); !ok {
		return octaviaNotFound("Load Balancer", r.PathValue("id"))
	}
	return jsonOK(zeroStats())
}

func (s *Server) listenerStats(r *http.Request) response {
	if _, ok := s.st.listeners.Get(r.PathValue("id")); !ok {
		return octaviaNotFound("Listener", r.PathValue("id"))
	}
	return jsonOK(zeroStats())
}

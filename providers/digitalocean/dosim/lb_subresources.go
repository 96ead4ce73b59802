package dosim

import (
	"net/http"
	"slices"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// addLBDroplets serves POST /v2/load_balancers/{id}/droplets.
func (s *Server) addLBDroplets(r *http.Request) (int, any) { return s.lbDroplets(r, true) }

// removeLBDroplets serves DELETE /v2/load_balancers/{id}/droplets.
func (s *Server) removeLBDroplets(r *http.Request) (int, any) { return s.lbDroplets(r, false) }

func (s *Server) lbDroplets(r *http.Request, add bool) (int, any) {
	rec, ok := s.st.lbs[r.PathValue("id")]
	if !ok {
		return notFound()
	}
	var req struct {
		DropletIDs []int `json:"droplet_ids"`
	}
	if err := simkit.Decode(r, &req); err != nil {
		return badJSON(err)
	}
	switch {
	case len(req.DropletIDs) == 0:
		return unprocessable("droplet_ids is required")
	case rec.lb.Tag != "":
		return unprocessable("load balancer targets droplets by tag; droplet_ids cannot be changed")
	}
	for _, id := range req.DropletIDs {
		if _, ok := s.st.droplets[id]; !ok && add {
			return unprocessable("droplet %d does not exist", id)
		}
	}
	for _, id := range req.DropletIDs {
		has := slices.Contains(rec.lb.DropletIDs, id)
		switch {
		case add && !has:
			rec.lb.DropletIDs = append(rec.lb.DropletIDs, id)
		case !add && has:
			rec.lb.DropletIDs = slices.DeleteFunc(rec.lb.DropletIDs, func(x int) bool { return x == id })
		}
	}
	return http.StatusNoContent, nil
}

// addLBRules serves POST /v2/load_balancers/{id}/forwarding_rules.
func (s *Server) addLBRules(r *http.Request) (int, any) { return s.lbRules(r, true) }

// removeLBRules serves DELETE /v2/load_balancers/{id}/forwarding_rules.
func (s *Server) removeLBRules(r *http.Request) (int, any) { return s.lbRules(r, false) }

// lbRules adds or removes forwarding rules; the result must pass the same
// validation as a PUT.
func (s *Server) lbRules(r *http.Request, add bool) (int, any) {
	rec, ok := s.st.lbs[r.PathValue("id")]
	if !ok {
		return notFound()
	}
	var req struct {
		ForwardingRules []ForwardingRule `json:"forwarding_rules"`
	}
	if err := simkit.Decode(r, &req); err != nil {
		return badJSON(err)
	}
	if len(req.ForwardingRules) == 0 {
		return unprocessable("forwarding_rules is required")
	}
	rules := slices.Clone(rec.lb.ForwardingRules)
	for _, fr := range req.ForwardingRules {
		if add {
			rules = append(rules, fr)
		} else {
			rules = slices.DeleteFunc(rules, func(x ForwardingRule) bool { return x == fr })
		}
	}
	check := lbRequest{Region: rec.lb.Region.Slug, ForwardingRules: rules}
	if msg := s.validateRules(&check); msg != "" {
		return unprocessable("%s", msg)
	}
	rec.lb.ForwardingRules = rules
	return http.StatusNoContent, nil
}

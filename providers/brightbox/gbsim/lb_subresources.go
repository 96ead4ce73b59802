package gbsim

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// decodeList reads a body that is a bare JSON array of T, as gobrightbox
// sends it, or an object holding the array under key.
func decodeList[T any](r *http.Request, key string) ([]T, *simkit.Response) {
	var raw json.RawMessage
	if resp := decode(r, &raw, false); resp != nil {
		return nil, resp
	}
	var items []T
	var err error
	if trimmed := bytes.TrimSpace(raw); len(trimmed) > 0 && trimmed[0] == '{' {
		var obj map[string]json.RawMessage
		if err = json.Unmarshal(trimmed, &obj); err == nil && obj[key] != nil {
			err = json.Unmarshal(obj[key], &items)
		}
	} else {
		err = json.Unmarshal(trimmed, &items)
	}
	if err != nil {
		resp := badJSON(err)
		return nil, &resp
	}
	if len(items) == 0 {
		resp := invalid("%s: at least one is required", key)
		return nil, &resp
	}
	return items, nil
}

// liveLB is the load balancer a sub-resource request names, or the
// answer: 404, or 409 when it is being deleted.
func (s *Server) liveLB(r *http.Request) (*LoadBalancer, *simkit.Response) {
	lb, found := s.st.lbs.Get(r.PathValue("id"))
	if !found {
		resp := notFound()
		return nil, &resp
	}
	if gone(lb.Status) {
		resp := conflict("Load balancer %s is %s", lb.ID, lb.Status)
		return nil, &resp
	}
	return lb, nil
}

func (s *Server) addNodes(r *http.Request) simkit.Response {
	return s.changeNodes(r, func(lb *LoadBalancer, id string) *simkit.Response {
		if slices.Contains(lb.Nodes, id) {
			resp := conflict("Server %s is already a node of %s", id, lb.ID)
			return &resp
		}
		if srv, ok := s.st.servers.Get(id); !ok || srv.Status == StatusDeleted {
			resp := invalid("nodes: no server %s", id)
			return &resp
		}
		lb.Nodes = append(lb.Nodes, id)
		return nil
	})
}

func (s *Server) removeNodes(r *http.Request) simkit.Response {
	return s.changeNodes(r, func(lb *LoadBalancer, id string) *simkit.Response {
		if !slices.Contains(lb.Nodes, id) {
			resp := conflict("Server %s is not a node of %s", id, lb.ID)
			return &resp
		}
		lb.Nodes = slices.DeleteFunc(lb.Nodes, func(x string) bool { return x == id })
		return nil
	})
}

// changeNodes applies change to a copy of the load balancer for each node
// of the request, and stores it only when every change succeeds.
func (s *Server) changeNodes(r *http.Request, change func(*LoadBalancer, string) *simkit.Response) simkit.Response {
	lb, resp := s.liveLB(r)
	if resp != nil {
		return *resp
	}
	nodes, resp := decodeList[nodeRef](r, "nodes")
	if resp != nil {
		return *resp
	}
	next := lb.clone()
	for _, n := range nodes {
		if resp := change(&next, n.Node); resp != nil {
			return *resp
		}
	}
	*lb = next
	return accepted(s.view(r).lb(lb))
}

func (s *Server) addListeners(r *http.Request) simkit.Response {
	return s.changeListeners(r, func(lb *LoadBalancer, l Listener) *simkit.Response {
		lb.Listeners = append(lb.Listeners, l)
		return nil
	})
}

func (s *Server) removeListeners(r *http.Request) simkit.Response {
	return s.changeListeners(r, func(lb *LoadBalancer, l Listener) *simkit.Response {
		i := slices.IndexFunc(lb.Listeners, func(x Listener) bool { return x.In == l.In })
		if i < 0 {
			resp := conflict("Load balancer %s has no listener on port %d", lb.ID, l.In)
			return &resp
		}
		lb.Listeners = slices.Delete(lb.Listeners, i, i+1)
		return nil
	})
}

// changeListeners applies change to a copy of the load balancer for each
// listener of the request and stores it only when the result is valid.
func (s *Server) changeListeners(r *http.Request, change func(*LoadBalancer, Listener) *simkit.Response) simkit.Response {
	lb, resp := s.liveLB(r)
	if resp != nil {
		return *resp
	}
	reqs, resp := decodeList[listenerReq](r, "listeners")
	if resp != nil {
		return *resp
	}
	ls, err := listeners(reqs)
	if err != nil {
		return invalid("%s", err.Error())
	}
	next := lb.clone()
	for _, l := range ls {
		if resp := change(&next, l); resp != nil {
			return *resp
		}
	}
	applyLBDefaults(&next)
	if err := validateLB(s.st, &next); err != nil {
		return invalid("%s", err.Error())
	}
	*lb = next
	return accepted(s.view(r).lb(lb))
}

func (s *Server) lockLoadBalancer(locked bool) simkit.HandlerFunc {
	return func(r *http.Request) simkit.Response {
		lb, found := s.st.lbs.Get(r.PathValue("id"))
		if !found {
			return notFound()
		}
		lb.Locked = locked
		return ok(s.view(r).lb(lb))
	}
}

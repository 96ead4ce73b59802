package gbsim

import (
	"net/http"
	"slices"
	"strings"
)

// MetadataHandler serves the metadata service a Brightbox server sees at
// http://169.254.169.254/ ("Every server has access to its own metadata
// via the EC2 compatible metadata server. Data such as hostname,
// instance-id and ssh keys are available", brightbox.com/docs/guides/cli/
// user-data), as server serverID sees it: the real service answers each
// server about itself. Serve it at the root of a listener of its own, or
// ask the Server itself under /_sim/metadata/<server ID>/ (see
// metadataRoutes). No auth, no faults, not logged. Plain text, EC2's
// layout:
//
//	GET /latest/meta-data/                          index: one entry a line, "/" after a directory
//	GET /latest/meta-data/instance-id               srv-xxxxx
//	GET /latest/meta-data/hostname                  the server's fqdn (also local-hostname)
//	GET /latest/meta-data/local-ipv4                its private IPv4 address
//	GET /latest/meta-data/placement/availability-zone  its zone's handle, gb1-a
//
// That the service exists, and that it has the hostname and the
// instance-id, is Brightbox's documentation; the values (instance-id the
// server's ID, the zone's handle as availability-zone, local-ipv4) are
// inferred from EC2's layout and not verified. An unknown path, or a
// server that does not exist (or is deleted), is 404.
func (s *Server) MetadataHandler(serverID string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.serveMetadata(w, r, serverID)
	})
}

// metadataRoutes serves GET /_sim/metadata/{server}/latest/meta-data/...,
// the metadata service of each server on the Server's own URL.
func (s *Server) metadataRoutes() {
	s.HandleFunc("GET /_sim/metadata/{server}/{path...}", func(w http.ResponseWriter, r *http.Request) {
		r2 := r.Clone(r.Context())
		r2.URL.Path = "/" + r.PathValue("path")
		r2.URL.RawPath = ""
		s.serveMetadata(w, r2, r.PathValue("server"))
	})
}

func (s *Server) serveMetadata(w http.ResponseWriter, r *http.Request, id string) {
	s.mu.Lock()
	srv, ok := s.st.servers.Get(id)
	var c CloudServer
	if ok {
		c = srv.clone()
	}
	s.mu.Unlock()
	if !ok || c.Status == StatusDeleted {
		http.NotFound(w, r)
		return
	}
	rest, found := strings.CutPrefix(r.URL.Path, "/latest/meta-data")
	if !found || (rest != "" && !strings.HasPrefix(rest, "/")) {
		http.NotFound(w, r)
		return
	}
	tree := map[string]string{
		"instance-id": c.ID, "hostname": c.FQDN, "local-hostname": c.FQDN,
		"placement/availability-zone": c.Zone,
	}
	if c.IPv4 != "none" {
		tree["local-ipv4"] = c.IPv4
	}
	w.Header().Set("Content-Type", "text/plain")
	key := strings.Trim(rest, "/")
	if v, ok := tree[key]; ok && !strings.HasSuffix(rest, "/") {
		_, _ = w.Write([]byte(v))
		return
	}
	// A directory: its entries, one a line.
	var entries []string
	seen := map[string]bool{}
	for k := range tree {
		sub, ok := strings.CutPrefix(k, key+"/")
		if key == "" {
			sub, ok = k, true
		}
		if !ok {
			continue
		}
		if dir, _, nested := strings.Cut(sub, "/"); nested {
			sub = dir + "/"
		}
		if !seen[sub] {
			seen[sub] = true
			entries = append(entries, sub)
		}
	}
	if len(entries) == 0 {
		http.NotFound(w, r)
		return
	}
	slices.Sort(entries)
	_, _ = w.Write([]byte(strings.Join(entries, "\n")))
}

package dosim

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path"
	"strconv"
	"strings"
)

// nameservers are the resolvers DigitalOcean's metadata gives a droplet.
var nameservers = []string{"67.207.67.2", "67.207.67.3"}

// MetadataHandler serves the droplet metadata service
// (http://169.254.169.254/metadata/v1/..., docs.digitalocean.com
// reference/api/metadata) as droplet dropletID sees it: the real service
// answers each droplet about itself, by the link-local address it asks
// from. Serve it at the root of a listener of its own (go-metadata's
// WithBaseURL keeps only the scheme and host of the URL it is given), or
// ask the Server itself under /_sim/metadata/<droplet ID>/ (see
// metadataRoutes). No auth, no faults, not logged.
//
//	GET /metadata/v1.json    everything, JSON (go-metadata's Metadata(): droplet_id, region, …)
//	GET /metadata/v1/        index: id hostname user-data vendor-data public-keys region
//	                         interfaces/ dns/ floating_ip/ reserved_ip/ tags/ features/
//	GET /metadata/v1/id      the droplet ID, text; likewise hostname, region, …,
//	                         interfaces/public/0/ipv4/address, tags/ (one per line)
//
// An index asked for without its trailing slash is a 301 to it, as on
// DigitalOcean; an unknown path, or a droplet that no longer exists, 404.
func (s *Server) MetadataHandler(dropletID int) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.serveMetadata(w, r, dropletID)
	})
}

// metadataRoutes serves GET /_sim/metadata/{droplet}/metadata/..., the
// metadata service of each droplet on the Server's own URL, for clients
// that take a base URL with a path.
func (s *Server) metadataRoutes() {
	s.HandleFunc("GET /_sim/metadata/{droplet}/{path...}", func(w http.ResponseWriter, r *http.Request) {
		id, err := strconv.Atoi(r.PathValue("droplet"))
		if err != nil {
			http.NotFound(w, r)
			return
		}
		r2 := r.Clone(r.Context())
		r2.URL.Path = "/" + r.PathValue("path")
		r2.URL.RawPath = ""
		s.serveMetadata(w, r2, id)
	})
}

// mdEntry is an entry of a metadata index: a value (string) or an index
// ([]mdEntry).
type mdEntry struct {
	name  string
	value any
}

func (s *Server) serveMetadata(w http.ResponseWriter, r *http.Request, id int) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	s.mu.Lock()
	d, ok := s.st.droplets[id]
	var c Droplet
	if ok {
		c = d.clone()
	}
	s.mu.Unlock()
	if !ok {
		http.NotFound(w, r)
		return
	}
	p := r.URL.Path
	switch {
	case p == "/metadata/v1.json":
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(metadataJSON(&c))
	case p == "/metadata/v1":
		redirect(w, "v1/")
	case strings.HasPrefix(p, "/metadata/v1/"):
		serveMetadataPath(w, r, metadataTree(&c), strings.TrimPrefix(p, "/metadata/v1/"))
	default:
		http.NotFound(w, r)
	}
}

// serveMetadataPath answers rest, a path under /metadata/v1/ in tree.
func serveMetadataPath(w http.ResponseWriter, r *http.Request, tree []mdEntry, rest string) {
	var node any = tree
	dir := rest == "" || strings.HasSuffix(rest, "/")
	for _, seg := range strings.Split(strings.Trim(rest, "/"), "/") {
		if seg == "" {
			continue
		}
		entries, ok := node.([]mdEntry)
		if !ok {
			http.NotFound(w, r)
			return
		}
		node = nil
		for _, e := range entries {
			if e.name == seg {
				node = e.value
			}
		}
		if node == nil {
			http.NotFound(w, r)
			return
		}
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	switch v := node.(type) {
	case string:
		if dir {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte(v))
	case []mdEntry:
		if !dir {
			redirect(w, path.Base(r.URL.Path)+"/")
			return
		}
		lines := make([]string, 0, len(v))
		for _, e := range v {
			if _, sub := e.value.([]mdEntry); sub {
				lines = append(lines, e.name+"/")
			} else {
				lines = append(lines, e.name)
			}
		}
		_, _ = w.Write([]byte(strings.Join(lines, "\n")))
	}
}

// redirect answers 301 to rel, relative to the URL asked for (which, under
// /_sim/metadata/<droplet>/, is not the path serveMetadata sees, so
// http.Redirect, which makes it absolute from that path, will not do).
func redirect(w http.ResponseWriter, rel string) {
	w.Header().Set("Location", rel)
	w.WriteHeader(http.StatusMovedPermanently)
}

// mdInterface is a network interface as the metadata service describes
// it.
type mdInterface struct {
	MAC  string  `json:"mac"`
	Type string  `json:"type"`
	IPv4 *mdIPv4 `json:"ipv4,omitempty"`
	IPv6 *mdIPv6 `json:"ipv6,omitempty"`
}

type mdIPv4 struct {
	IPAddress string `json:"ip_address"`
	Netmask   string `json:"netmask"`
	Gateway   string `json:"gateway"`
}

type mdIPv6 struct {
	IPAddress string `json:"ip_address"`
	CIDR      int    `json:"cidr"`
	Gateway   string `json:"gateway"`
}

// metadataInterfaces are d's public and private interfaces: the first
// address of each type.
func metadataInterfaces(d *Droplet) map[string][]mdInterface {
	out := map[string][]mdInterface{"public": {}, "private": {}}
	for i, typ := range []string{"public", "private"} {
		var ifc *mdInterface
		for _, n := range d.Networks.V4 {
			if n.Type == typ {
				ifc = &mdInterface{Type: typ, IPv4: &mdIPv4{IPAddress: n.IPAddress, Netmask: n.Netmask, Gateway: n.Gateway}}
				break
			}
		}
		for _, n := range d.Networks.V6 {
			if n.Type == typ {
				if ifc == nil {
					ifc = &mdInterface{Type: typ}
				}
				ifc.IPv6 = &mdIPv6{IPAddress: n.IPAddress, CIDR: n.Netmask, Gateway: n.Gateway}
				break
			}
		}
		if ifc != nil {
			n := d.ID % 1_000_000
			ifc.MAC = fmt.Sprintf("02:%02x:%02x:%02x:%02x:%02x", i, n>>24&0xff, n>>16&0xff, n>>8&0xff, n&0xff)
			out[typ] = append(out[typ], *ifc)
		}
	}
	return out
}

// metadataJSON is GET /metadata/v1.json for d (the fields of go-metadata's
// Metadata, which csi-digitalocean's node plugin reads its droplet_id and
// region from).
func metadataJSON(d *Droplet) map[string]any {
	return map[string]any{
		"droplet_id": d.ID, "hostname": d.Name, "user_data": "", "vendor_data": "", "public_keys": []string{},
		"auth_key": "", "region": d.Region.Slug, "interfaces": metadataInterfaces(d),
		"floating_ip": map[string]any{"ipv4": map[string]any{"active": false}},
		"reserved_ip": map[string]any{"ipv4": map[string]any{"active": false}},
		"dns":         map[string]any{"nameservers": nameservers}, "tags": append([]string{}, d.Tags...),
		"features": map[string]any{"dhcp_enabled": false},
	}
}

// metadataTree is the /metadata/v1/ index of d.
func metadataTree(d *Droplet) []mdEntry {
	ifcs := metadataInterfaces(d)
	var interfaces []mdEntry
	for _, typ := range []string{"public", "private"} {
		var list []mdEntry
		for i, ifc := range ifcs[typ] {
			e := []mdEntry{{"mac", ifc.MAC}, {"type", ifc.Type}}
			if ifc.IPv4 != nil {
				e = append(e, mdEntry{"ipv4", []mdEntry{
					{"address", ifc.IPv4.IPAddress}, {"netmask", ifc.IPv4.Netmask}, {"gateway", ifc.IPv4.Gateway},
				}})
			}
			if ifc.IPv6 != nil {
				e = append(e, mdEntry{"ipv6", []mdEntry{
					{"address", ifc.IPv6.IPAddress}, {"cidr", strconv.Itoa(ifc.IPv6.CIDR)}, {"gateway", ifc.IPv6.Gateway},
				}})
			}
			list = append(list, mdEntry{strconv.Itoa(i), e})
		}
		interfaces = append(interfaces, mdEntry{typ, list})
	}
	tags := make([]mdEntry, 0, len(d.Tags))
	for _, t := range d.Tags {
		tags = append(tags, mdEntry{t, t})
	}
	return []mdEntry{
		{"id", strconv.Itoa(d.ID)},
		{"hostname", d.Name},
		{"user-data", ""},
		{"vendor-data", ""},
		{"public-keys", ""},
		{"region", d.Region.Slug},
		{"interfaces", interfaces},
		{"dns", []mdEntry{{"nameservers", strings.Join(nameservers, "\n")}}},
		{"floating_ip", []mdEntry{{"ipv4", []mdEntry{{"active", "false"}}}}},
		{"reserved_ip", []mdEntry{{"ipv4", []mdEntry{{"active", "false"}}}}},
		{"tags", tags},
		{"features", []mdEntry{{"dhcp_enabled", "false"}}},
	}
}

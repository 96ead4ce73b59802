package openstacksim

import (
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// Nova's microversion range.
const (
	novaMaxMinor = 96
	novaMaxVer   = "2.96"
)

// Flavor is a Nova flavor.
type Flavor struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	VCPUs int    `json:"vcpus"`
	RAM   int    `json:"ram"`
	Disk  int    `json:"disk"`
}

// Flavors are the flavors Nova offers (DevStack's).
var Flavors = []Flavor{
	{"1", "m1.tiny", 1, 512, 1},
	{"2", "m1.small", 1, 2048, 20},
	{"3", "m1.medium", 2, 4096, 40},
	{"4", "m1.large", 4, 8192, 80},
	{"5", "m1.xlarge", 8, 16384, 160},
}

func findFlavor(ref string) (Flavor, bool) {
	i := slices.IndexFunc(Flavors, func(f Flavor) bool { return f.ID == ref || f.Name == ref })
	if i < 0 {
		return Flavor{}, false
	}
	return Flavors[i], true
}

// novaHandlerFunc serves a Nova endpoint for a microversion (minor of
// 2.x; 1 when the client asks for none).
type novaHandlerFunc func(r *http.Request, minor int) response

func (s *Server) novaRoutes() {
	for _, p := range []string{computePrefix, computePrefix + "/{$}"} {
		s.handle("GET "+p, s.computeVersions, simkit.NoAuth)
	}
	for _, p := range []string{computeV21, computeV21 + "/{$}"} {
		s.handle("GET "+p, func(r *http.Request) response { return jsonOK(map[string]any{"version": computeVersion(r)}) }, simkit.NoAuth)
	}
	c := computeV21
	s.novaHandle("GET "+c+"/servers", s.listServers(false))
	s.novaHandle("GET "+c+"/servers/detail", s.listServers(true))
	s.novaHandle("GET "+c+"/servers/{id}", s.getServer)
	s.novaHandle("DELETE "+c+"/servers/{id}", s.deleteServerAPI)
	s.novaHandle("POST "+c+"/servers/{id}/action", s.serverAction)
	s.novaHandle("GET "+c+"/servers/{id}/metadata", s.serverMetadata)
	s.novaHandle("GET "+c+"/servers/{id}/os-interface", s.serverInterfaces)
	s.novaHandle("GET "+c+"/flavors", s.listFlavors(false))
	s.novaHandle("GET "+c+"/flavors/detail", s.listFlavors(true))
	s.novaHandle("GET "+c+"/flavors/{id}", s.getFlavor)
	s.novaHandle("GET "+c+"/os-availability-zone", s.listAZs)
}

// novaHandle registers a Nova endpoint behind microversion negotiation:
// X-OpenStack-Nova-API-Version or OpenStack-API-Version: compute 2.x,
// echoed in the answer; out of range is 406.
func (s *Server) novaHandle(op string, h novaHandlerFunc) {
	s.handle(op, func(r *http.Request) response {
		minor, err := microversion(r)
		var resp response
		if err != nil {
			resp = novaError(http.StatusNotAcceptable, "%v", err)
		} else {
			resp = h(r, minor)
		}
		if resp.Header == nil {
			resp.Header = http.Header{}
		}
		v := "2." + strconv.Itoa(minor)
		resp.Header.Set("X-Openstack-Nova-Api-Version", v)
		resp.Header.Set("Openstack-Api-Version", "compute "+v)
		resp.Header.Set("Vary", "OpenStack-API-Version, X-OpenStack-Nova-API-Version")
		return resp
	})
}

func microversion(r *http.Request) (int, error) {
	v := r.Header.Get("X-OpenStack-Nova-API-Version")
	if h := r.Header.Get("OpenStack-API-Version"); h != "" {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(h), "compute "); ok {
			v = strings.TrimSpace(rest)
		}
	}
	switch v {
	case "":
		return 1, nil
	case "latest":
		return novaMaxMinor, nil
	}
	minor, err := strconv.Atoi(strings.TrimPrefix(v, "2."))
	if err != nil || !strings.HasPrefix(v, "2.") || minor < 1 || minor > novaMaxMinor {
		return 0, fmt.Errorf("Version %s is not supported by the API. Minimum is 2.1 and maximum is %s.", v, novaMaxVer) //nolint:staticcheck // the service's own message, verbatim
	}
	return minor, nil
}

func computeVersion(r *http.Request) map[string]any {
	return map[string]any{
		"id": "v2.1", "status": "CURRENT", "version": novaMaxVer, "min_version": "2.1", "updated": "2013-07-23T11:33:21Z",
		"links": []link{{Rel: "self", Href: simkit.BaseURL(r) + computeV21 + "/"}},
	}
}

func (s *Server) computeVersions(r *http.Request) response {
	return jsonOK(map[string]any{"versions": []any{computeVersion(r)}})
}

// listServers is GET /servers[/detail]: Nova's filters (name and ip are
// regular expressions matched anywhere, as Nova does), newest first, paged
// with limit and marker.
func (s *Server) listServers(detail bool) novaHandlerFunc {
	return func(r *http.Request, minor int) response {
		q := r.URL.Query()
		match, err := serverFilter(q)
		if err != nil {
			return novaError(http.StatusBadRequest, "%v", err)
		}
		items := []map[string]any{}
		all := s.st.servers.all()
		for i := len(all) - 1; i >= 0; i-- {
			v := s.serverView(all[i])
			if !match(v) {
				continue
			}
			if detail {
				items = append(items, s.serverJSON(r, all[i], minor))
			} else {
				items = append(items, map[string]any{"id": v.ID, "name": v.Name, "links": serverLinks(r, v.ID)})
			}
		}
		p, errResp := s.paginate(r, items, novaPages, "")
		if errResp != nil {
			return *errResp
		}
		return jsonOK(listBody("servers", p))
	}
}

// serverFilter builds the filter of Nova's list query.
func serverFilter(q map[string][]string) (func(NovaServer) bool, error) {
	get := func(k string) string {
		if v := q[k]; len(v) > 0 {
			return v[len(v)-1]
		}
		return ""
	}
	regex := map[string]*regexp.Regexp{}
	for _, k := range []string{"name", "ip", "ip6"} {
		if v := get(k); v != "" {
			re, err := regexp.Compile(v)
			if err != nil {
				return nil, fmt.Errorf("Invalid filter %s=%s: %w", k, v, err) //nolint:staticcheck // the service's own message, verbatim
			}
			regex[k] = re
		}
	}
	status, az, flavor := strings.ToUpper(get("status")), get("availability_zone"), get("flavor")
	tags := map[string][]string{}
	for _, k := range []string{"tags", "tags-any", "not-tags", "not-tags-any"} {
		if v := get(k); v != "" {
			tags[k] = strings.Split(v, ",")
		}
	}
	return func(v NovaServer) bool {
		if re := regex["name"]; re != nil && !re.MatchString(v.Name) {
			return false
		}
		for k, ver := range map[string]bool{"ip": true, "ip6": false} {
			if re := regex[k]; re != nil && !slices.ContainsFunc(v.Ports, func(p ServerPort) bool {
				return slices.ContainsFunc(append(slices.Clone(p.FixedIPs), p.FloatingIP), func(ip string) bool {
					return ip != "" && strings.Contains(ip, ":") != ver && re.MatchString(ip)
				})
			}) {
				return false
			}
		}
		if status != "" && v.Status != status || az != "" && v.AZ != az {
			return false
		}
		if fl, ok := findFlavor(v.Flavor); flavor != "" && (!ok || fl.ID != flavor) {
			return false
		}
		has := func(t string) bool { return slices.Contains(v.Tags, t) }
		all := func(ts []string) bool { return !slices.ContainsFunc(ts, func(t string) bool { return !has(t) }) }
		some := func(ts []string) bool { return slices.ContainsFunc(ts, has) }
		return (tags["tags"] == nil || all(tags["tags"])) && (tags["tags-any"] == nil || some(tags["tags-any"])) &&
			(tags["not-tags"] == nil || !all(tags["not-tags"])) && (tags["not-tags-any"] == nil || !some(tags["not-tags-any"]))
	}, nil
}

func (s *Server) getServer(r *http.Request, minor int) response {
	v, ok := s.st.servers.get(r.PathValue("id"))
	if !ok {
		return novaError(http.StatusNotFound, "Instance %s could not be found.", r.PathValue("id"))
	}
	return jsonOK(map[string]any{"server": s.serverJSON(r, v, minor)})
}

func (s *Server) deleteServerAPI(r *http.Request, _ int) response {
	if _, ok := s.st.servers.get(r.PathValue("id")); !ok {
		return novaError(http.StatusNotFound, "Instance %s could not be found.", r.PathValue("id"))
	}
	s.deleteServer(r.PathValue("id"))
	return noContent()
}

// serverAction serves os-stop and os-start (202), 409 when the server is
// not in a state to do it.
func (s *Server) serverAction(r *http.Request, _ int) response {
	v, ok := s.st.servers.get(r.PathValue("id"))
	if !ok {
		return novaError(http.StatusNotFound, "Instance %s could not be found.", r.PathValue("id"))
	}
	var body map[string]any
	if err := simkit.Decode(r, &body); err != nil {
		return novaError(http.StatusBadRequest, "Invalid request body: %v", err)
	}
	switch {
	case hasKey(body, "os-stop"):
		if v.Status != StatusActive {
			return novaError(http.StatusConflict, "Cannot 'stop' instance %s while it is in vm_state %s", v.ID, vmState(v.Status))
		}
		v.Status = StatusShutoff
	case hasKey(body, "os-start"):
		if v.Status != StatusShutoff {
			return novaError(http.StatusConflict, "Cannot 'start' instance %s while it is in vm_state %s", v.ID, vmState(v.Status))
		}
		v.Status = StatusActive
	default:
		return novaError(http.StatusBadRequest, "There is no such action: %v", slices.Collect(mapKeys(body)))
	}
	return simkit.NoContent(http.StatusAccepted)
}

func (s *Server) serverMetadata(r *http.Request, _ int) response {
	v, ok := s.st.servers.get(r.PathValue("id"))
	if !ok {
		return novaError(http.StatusNotFound, "Instance %s could not be found.", r.PathValue("id"))
	}
	md := v.Metadata
	if md == nil {
		md = map[string]string{}
	}
	return jsonOK(map[string]any{"metadata": md})
}

func (s *Server) serverInterfaces(r *http.Request, _ int) response {
	v, ok := s.st.servers.get(r.PathValue("id"))
	if !ok {
		return novaError(http.StatusNotFound, "Instance %s could not be found.", r.PathValue("id"))
	}
	out := []map[string]any{}
	for _, p := range s.st.ports.all() {
		if p.DeviceID == v.ID {
			out = append(out, map[string]any{"port_id": p.ID, "net_id": p.NetworkID, "mac_addr": p.MACAddress, "port_state": p.Status, "fixed_ips": p.FixedIPs})
		}
	}
	return jsonOK(map[string]any{"interfaceAttachments": out})
}

func hasKey(m map[string]any, k string) bool { _, ok := m[k]; return ok }

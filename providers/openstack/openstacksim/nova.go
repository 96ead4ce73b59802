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

// novaHandlerFunc serves a Nova endpoint for a microversion (minor of
// 2.x; 1 when the client asks for none).
type novaHandlerFunc func(r *http.Request, minor int) response

func (s *Server) novaRoutes() {
	for _, p := range []string{computePrefix, computePrefix + "/{$}"} {
		s.Handle("GET "+p, s.computeVersions, simkit.NoAuth)
	}
	for _, p := range []string{computeV21, computeV21 + "/{$}"} {
		s.Handle("GET "+p, func(r *http.Request) response {
			v := computeVersion(r)
			v["media-types"] = []map[string]string{{"base": "application/json", "type": "application/vnd.openstack.compute+json;version=2.1"}}
			return jsonOK(map[string]any{"version": v})
		}, simkit.NoAuth)
	}
	c := computeV21
	s.novaHandle("GET "+c+"/servers", s.listServers(false))
	s.novaHandle("GET "+c+"/servers/detail", s.listServers(true))
	s.novaHandle("GET "+c+"/servers/{id}", s.getServer)
	s.novaHandle("DELETE "+c+"/servers/{id}", s.deleteServerAPI)
	s.novaHandle("POST "+c+"/servers/{id}/action", s.serverAction)
	s.novaHandle("GET "+c+"/servers/{id}/metadata", s.serverMetadata)
	s.novaHandle("GET "+c+"/servers/{id}/os-interface", s.serverInterfaces)
	s.novaHandle("GET "+c+"/os-availability-zone", s.listAZs)
	s.novaVolumeAttachmentRoutes()
	s.flavorRoutes()
	s.novaQuotaRoutes()
	s.novaPolicyRoutes()
}

// novaHandle registers a Nova endpoint behind microversion negotiation:
// X-OpenStack-Nova-API-Version or OpenStack-API-Version: compute 2.x,
// echoed in the answer with Vary; a version that does not parse is 400,
// one out of range 406 (neither with version headers, as from Nova).
func (s *Server) novaHandle(op string, h novaHandlerFunc) {
	s.Handle(op, func(r *http.Request) response {
		minor, err := microversion(r)
		if err != nil {
			return novaError(err.status, "%s", err.msg)
		}
		resp := h(r, minor)
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

func microversion(r *http.Request) (int, *microversionError) {
	v := r.Header.Get("X-OpenStack-Nova-API-Version")
	for _, h := range r.Header.Values("OpenStack-API-Version") {
		for part := range strings.SplitSeq(h, ",") {
			if svc, ver, ok := strings.Cut(strings.TrimSpace(part), " "); ok && strings.EqualFold(svc, "compute") {
				v = strings.TrimSpace(ver)
			}
		}
	}
	switch strings.ToLower(v) {
	case "":
		return 1, nil
	case "latest":
		return novaMaxMinor, nil
	}
	m := versionPattern.FindStringSubmatch(v)
	if m == nil {
		return 0, &microversionError{http.StatusBadRequest, fmt.Sprintf("API Version String %s is of invalid format. Must be of format MajorNum.MinorNum.", v)}
	}
	major, minor := m[1], atoi(m[2])
	if major != "2" || minor < 1 || minor > novaMaxMinor {
		return 0, &microversionError{http.StatusNotAcceptable, fmt.Sprintf("Version %s is not supported by the API. Minimum is 2.1 and maximum is %s.", v, novaMaxVer)}
	}
	return minor, nil
}

// versionPattern is the form of a microversion Nova accepts.
var versionPattern = regexp.MustCompile(`^([1-9][0-9]*)\.([1-9][0-9]{0,5}|0)$`)

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }

// microversionError is a microversion Nova refuses: 400 when it does not
// parse, 406 when it is out of range.
type microversionError struct {
	status int
	msg    string
}

// computeVersion is the v2.1 entry of Nova's version list; the
// document at /v2.1 adds its media types.
func computeVersion(r *http.Request) map[string]any {
	return map[string]any{
		"id": "v2.1", "status": "CURRENT", "version": novaMaxVer, "min_version": "2.1", "updated": "2013-07-23T11:33:21Z",
		"links": []link{{Rel: "self", Href: simkit.BaseURL(r) + computeV21 + "/"}},
	}
}

func (s *Server) computeVersions(r *http.Request) response {
	return jsonOK(map[string]any{"versions": []any{computeVersion(r)}})
}

// listServers is GET /servers[/detail]: the token's project's servers
// (all_tenants is an admin's), Nova's filters (name and ip are
// regular expressions matched anywhere, as Nova does), newest first, paged
// with limit and marker.
func (s *Server) listServers(detail bool) novaHandlerFunc {
	return func(r *http.Request, minor int) response {
		q := r.URL.Query()
		if errResp := allTenants(q, detail); errResp != nil {
			return *errResp
		}
		match, err := serverFilter(q)
		if err != nil {
			return novaError(http.StatusBadRequest, "%v", err)
		}
		project := s.tokenProject(r)
		defer s.viewingServers()()
		view := func(v *serverRec) map[string]any {
			if detail {
				return s.serverJSON(r, v, minor, false)
			}
			return map[string]any{"id": v.ID, "name": v.Name, "links": serverLinks(r, v.ID)}
		}
		items := []map[string]any{}
		all := s.st.servers.All()
		for i := len(all) - 1; i >= 0; i-- {
			v := s.serverView(all[i])
			if all[i].project != project || !match(v) || q.Get("flavor") != "" && all[i].flavorID != q.Get("flavor") {
				continue
			}
			items = append(items, view(all[i]))
		}
		p, errResp := s.paginate(r, items, novaPages, "")
		if errResp != nil {
			return *errResp
		}
		// The page is a read of each server on it, which may settle its
		// task: it shows what the read left.
		var read []*serverRec
		for _, m := range p.items {
			if v, ok := s.st.servers.Get(itemID(m)); ok && s.readServer(v) {
				read = append(read, v)
			}
		}
		s.ports = s.st.indexPorts() // as the reads left them
		shown := []map[string]any{}
		for _, v := range read {
			shown = append(shown, view(v))
		}
		p.items = shown
		return jsonOK(listBody("servers", p))
	}
}

// allTenants refuses all_tenants (any value but a false one), which only
// an admin may ask for: 403 from the policy, 400 for a value that is not
// a boolean, as Nova answers.
func allTenants(q map[string][]string, detail bool) *response {
	vs, ok := q["all_tenants"]
	if !ok {
		return nil
	}
	switch v := strings.ToLower(vs[len(vs)-1]); v {
	case "0", "f", "false", "off", "n", "no":
		return nil
	case "", "1", "t", "true", "on", "y", "yes":
	default:
		resp := novaError(http.StatusBadRequest, "Invalid input received: Unrecognized value '%s', acceptable values are: '0', '1', 'f', 'false', 'n', 'no', 'off', 'on', 't', 'true', 'y', 'yes'", vs[len(vs)-1])
		return &resp
	}
	rule := "os_compute_api:servers:index:get_all_tenants"
	if detail {
		rule = "os_compute_api:servers:detail:get_all_tenants"
	}
	resp := policyForbidden(rule)
	return &resp
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
	status, az := strings.ToUpper(get("status")), get("availability_zone")
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
		has := func(t string) bool { return slices.Contains(v.Tags, t) }
		all := func(ts []string) bool { return !slices.ContainsFunc(ts, func(t string) bool { return !has(t) }) }
		some := func(ts []string) bool { return slices.ContainsFunc(ts, has) }
		return (tags["tags"] == nil || all(tags["tags"])) && (tags["tags-any"] == nil || some(tags["tags-any"])) &&
			(tags["not-tags"] == nil || !all(tags["not-tags"])) && (tags["not-tags-any"] == nil || !some(tags["not-tags-any"]))
	}, nil
}

func hasKey(m map[string]any, k string) bool { _, ok := m[k]; return ok }

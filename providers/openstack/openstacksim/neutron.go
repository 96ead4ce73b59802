package openstacksim

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// neutronExtensions are the extension aliases Neutron advertises (minus
// Options.DisabledExtensions): each one's resources, attributes or
// filters are served (see TestEveryAdvertisedEntryAnswers).
var neutronExtensions = []struct{ alias, name string }{
	{"agent", "agent"},
	{"allowed-address-pairs", "Allowed Address Pairs"},
	{"availability_zone", "Availability Zone"},
	{"availability_zone_filter", "Availability Zone Filter Extension"},
	{"binding", "Port Binding"},
	{"external-net", "Neutron external network"},
	{"extraroute", "Neutron Extra Route"},
	{"extraroute-atomic", "Atomically add/remove extra routes"},
	{"filter-validation", "Filter parameters validation"},
	{"network_availability_zone", "Network Availability Zone"},
	{"port-security", "Port Security"},
	{"port-security-groups-filtering", "Port filtering on security groups"},
	{"quota_details", "Quota details management support"},
	{"quotas", "Quota management support"},
	{"revision-if-match", "If-Match constraints based on revision_number"},
	{"router", "Neutron L3 Router"},
	{"router_availability_zone", "Router Availability Zone"},
	{"security-group", "security-group"},
	{"standard-attr-description", "standard-attr-description"},
	{"standard-attr-revisions", "Resource revision numbers"},
	{"standard-attr-tag", "Tag support for resources with standard attribute: port, subnet, network, router, floatingip, security_group"},
	{"standard-attr-timestamp", "Resource timestamps"},
}

// neutronCoreResources are the core resources GET /v2.0/ lists.
var neutronCoreResources = []struct{ name, collection string }{
	{"network", "networks"}, {"port", "ports"}, {"subnet", "subnets"}, {"subnetpool", "subnetpools"},
}

func (s *Server) neutronRoutes() {
	for _, p := range []string{networkPrefix, networkPrefix + "/{$}"} {
		s.Handle("GET "+p, s.networkVersions, simkit.NoAuth)
	}
	n := networkV2
	for _, p := range []string{n, n + "/{$}"} {
		s.Handle("GET "+p, s.networkResources)
	}
	s.Handle("GET "+n+"/extensions", s.listExtensions)
	s.Handle("GET "+n+"/extensions/{alias}", s.getExtension)
	s.Handle("GET "+n+"/networks", networkAPI.list(s))
	s.Handle("GET "+n+"/networks/{id}", networkAPI.get(s))
	s.Handle("GET "+n+"/subnets", subnetAPI.list(s))
	s.Handle("GET "+n+"/subnets/{id}", subnetAPI.get(s))
	s.Handle("GET "+n+"/ports", s.listPorts)
	s.Handle("POST "+n+"/ports", s.createPort)
	s.Handle("GET "+n+"/ports/{id}", portAPI.get(s))
	s.Handle("PUT "+n+"/ports/{id}", s.updatePort)
	s.Handle("DELETE "+n+"/ports/{id}", s.deletePort)
	s.Handle("GET "+n+"/routers", routerAPI.list(s))
	s.Handle("GET "+n+"/routers/{id}", routerAPI.get(s))
	s.Handle("PUT "+n+"/routers/{id}", s.updateRouter)
	s.Handle("PUT "+n+"/routers/{id}/add_extraroutes", s.addExtraRoutes)
	s.Handle("PUT "+n+"/routers/{id}/remove_extraroutes", s.removeExtraRoutes)
	s.Handle("GET "+n+"/floatingips", floatingIPAPI.list(s))
	s.Handle("POST "+n+"/floatingips", s.createFloatingIP)
	s.Handle("GET "+n+"/floatingips/{id}", floatingIPAPI.get(s))
	s.Handle("PUT "+n+"/floatingips/{id}", s.updateFloatingIP)
	s.Handle("DELETE "+n+"/floatingips/{id}", s.deleteFloatingIP)
	s.Handle("GET "+n+"/security-groups", securityGroupAPI.list(s))
	s.Handle("POST "+n+"/security-groups", s.createSecurityGroup)
	s.Handle("GET "+n+"/security-groups/{id}", securityGroupAPI.get(s))
	s.Handle("PUT "+n+"/security-groups/{id}", s.updateSecurityGroup)
	s.Handle("DELETE "+n+"/security-groups/{id}", s.deleteSecurityGroup)
	s.Handle("GET "+n+"/subnetpools", s.listSubnetPools)
	s.Handle("GET "+n+"/subnetpools/{id}", func(r *http.Request) response {
		return neutronError(http.StatusNotFound, "SubnetPoolNotFound", "Subnet pool %s could not be found.", r.PathValue("id"))
	})
	s.Handle("GET "+n+"/security-group-rules", s.listSecurityGroupRules)
	s.Handle("POST "+n+"/security-group-rules", s.createSecurityGroupRule)
	s.Handle("GET "+n+"/security-group-rules/{id}", s.getSecurityGroupRule)
	s.Handle("DELETE "+n+"/security-group-rules/{id}", s.deleteSecurityGroupRule)
	s.neutronTagRoutes()
	s.neutronQuotaRoutes()
	s.availabilityZoneRoutes()
}

// networkResources is GET /v2.0/: the core resources, each with a link
// to its collection.
func (s *Server) networkResources(r *http.Request) response {
	out := []map[string]any{}
	for _, res := range neutronCoreResources {
		out = append(out, map[string]any{
			"name": res.name, "collection": res.collection,
			"links": []link{{Rel: "self", Href: simkit.BaseURL(r) + networkV2 + "/" + res.collection}},
		})
	}
	return jsonOK(map[string]any{"resources": out})
}

// listSubnetPools lists the subnet pools: there are none (a member sees
// only its own and shared ones).
func (s *Server) listSubnetPools(r *http.Request) response {
	return s.neutronList(r, "subnetpools", "Subnet pool", []map[string]any{})
}

// networkVersions is Neutron's root document. gophercloud's NewNetworkV2
// fails without it.
func (s *Server) networkVersions(r *http.Request) response {
	return jsonOK(map[string]any{"versions": []any{map[string]any{
		"id": "v2.0", "status": "CURRENT",
		"links": []link{{Rel: "self", Href: simkit.BaseURL(r) + networkV2 + "/"}},
	}}})
}

func (s *Server) extensionEnabled(alias string) bool {
	return !slices.Contains(s.opts.DisabledExtensions, alias)
}

func extensionView(alias, name string) map[string]any {
	return map[string]any{"alias": alias, "name": name, "description": name + ".", "updated": "2013-01-20T00:00:00-00:00", "links": []any{}}
}

func (s *Server) listExtensions(*http.Request) response {
	out := []map[string]any{}
	for _, e := range neutronExtensions {
		if s.extensionEnabled(e.alias) {
			out = append(out, extensionView(e.alias, e.name))
		}
	}
	return jsonOK(map[string]any{"extensions": out})
}

func (s *Server) getExtension(r *http.Request) response {
	alias := r.PathValue("alias")
	for _, e := range neutronExtensions {
		if e.alias == alias && s.extensionEnabled(alias) {
			return jsonOK(map[string]any{"extension": extensionView(e.alias, e.name)})
		}
	}
	return neutronError(http.StatusNotFound, "ExtensionNotFound", "Extension with alias %s does not exist", alias)
}

// decodeEnvelope reads {key: {...}} from r into a map of the object's
// attributes.
func decodeEnvelope(r *http.Request, key string) (map[string]json.RawMessage, error) {
	var body map[string]map[string]json.RawMessage
	if err := simkit.Decode(r, &body); err != nil {
		return nil, err
	}
	obj, ok := body[key]
	if !ok {
		return nil, fmt.Errorf("resource body %q is missing", key)
	}
	return obj, nil
}

// patch applies the attributes of obj to a copy of cur and returns it.
// Attributes outside allowed are rejected, as Neutron rejects read-only
// ones; null clears an attribute.
func patch[T any](cur T, obj map[string]json.RawMessage, allowed ...string) (T, error) {
	var zero T
	for k := range obj {
		if !slices.Contains(allowed, k) {
			return zero, fmt.Errorf("Cannot update read-only attribute %s", k) //nolint:staticcheck // the service's own message, verbatim
		}
	}
	data, err := json.Marshal(cur)
	if err != nil {
		return zero, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return zero, err
	}
	for k, v := range obj {
		m[k] = v
	}
	if data, err = json.Marshal(m); err != nil {
		return zero, err
	}
	var out T
	if err := json.Unmarshal(data, &out); err != nil {
		return zero, fmt.Errorf("invalid input: %w", err)
	}
	return out, nil
}

// decodeAttrs unmarshals obj's attributes into v (a struct whose JSON
// names are the attributes).
func decodeAttrs(obj map[string]json.RawMessage, v any) error {
	data, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("invalid input: %w", err)
	}
	return nil
}

// ifMatch enforces "If-Match: revision_number=N" on an update of a
// resource at revision rev: 412 when it has moved on.
func ifMatch(r *http.Request, rev int) *response {
	h := r.Header.Get("If-Match")
	if h == "" {
		return nil
	}
	v, ok := strings.CutPrefix(h, "revision_number=")
	n, err := strconv.Atoi(v)
	if !ok || err != nil {
		resp := neutronBadRequest("Invalid If-Match header %q: want revision_number=<int>", h)
		return &resp
	}
	if n != rev {
		resp := neutronError(http.StatusPreconditionFailed, "RevisionNumberConstraintFailed", "Constrained to %d, but current revision is %d", n, rev)
		return &resp
	}
	return nil
}

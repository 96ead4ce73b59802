package openstacksim

import (
	"iter"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// vmState and powerState are the OS-EXT-STS attributes of a status.
func vmState(status string) string {
	switch status {
	case StatusActive:
		return "active"
	case StatusShutoff:
		return "stopped"
	case StatusBuild:
		return "building"
	case StatusPaused:
		return "paused"
	case StatusError:
		return "error"
	}
	return strings.ToLower(status)
}

func powerState(status string) int {
	switch status {
	case StatusActive:
		return 1
	case StatusPaused:
		return 3
	case StatusShutoff:
		return 4
	}
	return 0
}

func serverLinks(r *http.Request, id string) []link {
	base := simkit.BaseURL(r)
	return []link{
		{Rel: "self", Href: base + computeV21 + "/servers/" + id},
		{Rel: "bookmark", Href: base + computePrefix + "/servers/" + id},
	}
}

// serverJSON is a server as GET /servers/{id} shows it at microversion
// 2.minor: addresses from its Neutron ports and floating IPs, the flavor
// as a link before 2.47 and embedded from 2.47, tags from 2.26.
func (s *Server) serverJSON(r *http.Request, rec *serverRec, minor int) map[string]any {
	v := s.serverView(rec)
	fl, _ := findFlavor(rec.flavorID)
	addresses := map[string][]map[string]any{}
	for _, p := range v.Ports {
		netName := p.Network
		if n, ok := s.st.networks.get(p.Network); ok {
			netName = n.Name
		}
		add := func(ip, typ string) {
			ver := 4
			if strings.Contains(ip, ":") {
				ver = 6
			}
			addresses[netName] = append(addresses[netName], map[string]any{
				"addr": ip, "version": ver, "OS-EXT-IPS:type": typ, "OS-EXT-IPS-MAC:mac_addr": p.MACAddress,
			})
		}
		for _, ip := range p.FixedIPs {
			add(ip, "fixed")
		}
		if p.FloatingIP != "" {
			add(p.FloatingIP, "floating")
		}
	}
	base := simkit.BaseURL(r)
	flavor := map[string]any{"id": fl.ID, "links": []link{{Rel: "bookmark", Href: base + computePrefix + "/flavors/" + fl.ID}}}
	if minor >= 47 {
		flavor = map[string]any{"original_name": fl.Name, "vcpus": fl.VCPUs, "ram": fl.RAM, "disk": fl.Disk, "ephemeral": 0, "swap": 0, "extra_specs": map[string]string{}}
	}
	md := v.Metadata
	if md == nil {
		md = map[string]string{}
	}
	out := map[string]any{
		"id": v.ID, "name": v.Name, "status": v.Status, "tenant_id": s.st.projectID, "user_id": s.opts.Users[0].ID,
		"created": createdTS, "updated": createdTS, "hostId": hexID("host", "compute-1", s.st.projectID)[:28],
		"addresses": addresses, "flavor": flavor, "metadata": md, "links": serverLinks(r, v.ID),
		"image":      map[string]any{"id": "00000000-0000-4000-8000-0000000000aa", "links": []link{{Rel: "bookmark", Href: base + computePrefix + "/images/00000000-0000-4000-8000-0000000000aa"}}},
		"accessIPv4": v.AccessIPv4, "accessIPv6": v.AccessIPv6, "key_name": nil, "config_drive": "", "progress": 0,
		"OS-DCF:diskConfig": "MANUAL", "OS-EXT-AZ:availability_zone": v.AZ,
		"OS-EXT-STS:vm_state": vmState(v.Status), "OS-EXT-STS:power_state": powerState(v.Status), "OS-EXT-STS:task_state": nil,
		"OS-EXT-SRV-ATTR:host": "compute-1", "OS-EXT-SRV-ATTR:hypervisor_hostname": "compute-1",
		"OS-EXT-SRV-ATTR:instance_name": "instance-" + v.ID[:8],
		"OS-SRV-USG:launched_at":        "2024-01-01T00:00:00.000000", "OS-SRV-USG:terminated_at": nil,
		"os-extended-volumes:volumes_attached": []any{}, "security_groups": []map[string]string{{"name": "default"}},
	}
	if minor >= 9 {
		out["locked"] = false
	}
	if minor >= 26 {
		out["tags"] = nonNil(v.Tags)
	}
	return out
}

func flavorJSON(r *http.Request, f Flavor, detail bool) map[string]any {
	base := simkit.BaseURL(r)
	out := map[string]any{"id": f.ID, "name": f.Name, "links": []link{
		{Rel: "self", Href: base + computeV21 + "/flavors/" + f.ID},
		{Rel: "bookmark", Href: base + computePrefix + "/flavors/" + f.ID},
	}}
	if detail {
		maps.Copy(out, map[string]any{
			"vcpus": f.VCPUs, "ram": f.RAM, "disk": f.Disk, "swap": 0, "rxtx_factor": 1.0,
			"OS-FLV-EXT-DATA:ephemeral": 0, "OS-FLV-DISABLED:disabled": false, "os-flavor-access:is_public": true,
		})
	}
	return out
}

func (s *Server) listFlavors(detail bool) novaHandlerFunc {
	return func(r *http.Request, _ int) response {
		items := []map[string]any{}
		for _, f := range Flavors {
			items = append(items, flavorJSON(r, f, detail))
		}
		p, errResp := s.paginate(r, items, novaPages, "")
		if errResp != nil {
			return *errResp
		}
		return jsonOK(listBody("flavors", p))
	}
}

func (s *Server) getFlavor(r *http.Request, _ int) response {
	for _, f := range Flavors {
		if f.ID == r.PathValue("id") {
			return jsonOK(map[string]any{"flavor": flavorJSON(r, f, true)})
		}
	}
	return novaError(http.StatusNotFound, "Flavor %s could not be found.", r.PathValue("id"))
}

// listAZs lists "nova" and every zone a server is in.
func (s *Server) listAZs(*http.Request, int) response {
	zones := []string{"nova"}
	for _, v := range s.st.servers.all() {
		if !slices.Contains(zones, v.AZ) {
			zones = append(zones, v.AZ)
		}
	}
	slices.Sort(zones)
	out := []map[string]any{}
	for _, z := range zones {
		out = append(out, map[string]any{"zoneName": z, "zoneState": map[string]bool{"available": true}, "hosts": nil})
	}
	return jsonOK(map[string]any{"availabilityZoneInfo": out})
}

func mapKeys[K comparable, V any](m map[K]V) iter.Seq[K] { return maps.Keys(m) }

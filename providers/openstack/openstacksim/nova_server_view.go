package openstacksim

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// serverHost is the compute host every server runs on.
const serverHost = "compute-1"

// serverJSON is a server as GET /servers/{id} (show) or /servers/detail
// shows it at microversion 2.minor to a project member: addresses from
// its Neutron ports and floating IPs, the flavor as a link before 2.47
// and embedded from 2.47, locked from 2.9, description from 2.19, tags
// from 2.26, trusted_image_certificates from 2.63, server_groups (show
// only) from 2.71, locked_reason from 2.73, OS-EXT-SRV-ATTR:hostname from
// 2.90 (the other extended attributes and host_status are admin-only),
// pinned_availability_zone from 2.96.
func (s *Server) serverJSON(r *http.Request, rec *serverRec, minor int, show bool) map[string]any {
	v := s.serverView(rec)
	base := simkit.BaseURL(r)
	hostID := sha256.Sum224([]byte(rec.project + serverHost))
	out := map[string]any{
		"id": v.ID, "name": v.Name, "status": v.Status, "tenant_id": rec.project, "user_id": s.opts.Users[0].ID,
		"created": createdTS, "updated": createdTS, "hostId": hex.EncodeToString(hostID[:]),
		"addresses": s.serverAddresses(v), "flavor": s.embeddedFlavor(r, rec, minor), "metadata": nonNilMap(v.Metadata),
		"links":      serverLinks(r, v.ID),
		"image":      map[string]any{"id": rec.imageID, "links": []link{{Rel: "bookmark", Href: base + computePrefix + "/images/" + rec.imageID}}},
		"accessIPv4": v.AccessIPv4, "accessIPv6": v.AccessIPv6, "key_name": nil, "config_drive": "",
		"OS-DCF:diskConfig": "MANUAL", "OS-EXT-AZ:availability_zone": v.AZ,
		"OS-EXT-STS:vm_state": vmState(v.Status), "OS-EXT-STS:power_state": powerState(v.Status), "OS-EXT-STS:task_state": nullable(v.TaskState),
		"OS-SRV-USG:launched_at": "2024-01-01T00:00:00.000000", "OS-SRV-USG:terminated_at": nil,
		"os-extended-volumes:volumes_attached": s.volumesAttached(v.ID, minor),
	}
	if v.Status == StatusActive || v.Status == StatusBuild {
		out["progress"] = 0
	}
	if groups := s.serverSecurityGroups(v); len(groups) > 0 {
		out["security_groups"] = groups
	}
	for _, f := range []struct {
		since int
		key   string
		value any
	}{
		{9, "locked", false},
		{19, "description", nil},
		{26, "tags", nonNil(v.Tags)},
		{63, "trusted_image_certificates", nil},
		{73, "locked_reason", nil},
		{90, "OS-EXT-SRV-ATTR:hostname", sanitizeHostname(v.Name, v.ID)},
		{96, "pinned_availability_zone", nullable(rec.pinnedAZ)},
	} {
		if minor >= f.since {
			out[f.key] = f.value
		}
	}
	if show && minor >= 71 {
		out["server_groups"] = []string{}
	}
	return out
}

// embeddedFlavor is the server's flavor: a link to it before 2.47, its
// sizes (and extra specs, which a project reader may see) from 2.47.
func (s *Server) embeddedFlavor(r *http.Request, rec *serverRec, minor int) map[string]any {
	if minor < 47 {
		return map[string]any{"id": rec.flavorID, "links": []link{{Rel: "bookmark", Href: simkit.BaseURL(r) + computePrefix + "/flavors/" + rec.flavorID}}}
	}
	fl, ok := s.st.flavors.Get(rec.flavorID)
	if !ok {
		return map[string]any{}
	}
	return map[string]any{
		"original_name": fl.Name, "vcpus": fl.VCPUs, "ram": fl.RAM, "disk": fl.Disk,
		"ephemeral": fl.Ephemeral, "swap": fl.Swap, "extra_specs": nonNilMap(fl.ExtraSpecs),
	}
}

// serverAddresses are a server's addresses by network name.
func (s *Server) serverAddresses(v NovaServer) map[string][]map[string]any {
	addresses := map[string][]map[string]any{}
	for _, p := range v.Ports {
		netName := p.Network
		if n, ok := s.st.networks.Get(p.Network); ok {
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
	return addresses
}

// serverSecurityGroups are the names of the security groups on the
// server's ports, each once.
func (s *Server) serverSecurityGroups(v NovaServer) []map[string]string {
	var out []map[string]string
	seen := map[string]bool{}
	for _, sp := range v.Ports {
		p, ok := s.st.ports.Get(sp.ID)
		if !ok {
			continue
		}
		for _, id := range p.SecurityGroups {
			name := id
			if sg, ok := s.st.securityGroups.Get(id); ok {
				name = sg.Name
			}
			if !seen[name] {
				seen[name] = true
				out = append(out, map[string]string{"name": name})
			}
		}
	}
	return out
}

// sanitizeHostname is the hostname Nova derives from a display name:
// spaces, underscores and dots become dashes, other characters outside
// [A-Za-z0-9-] go, lower case, at most 63 characters, no leading or
// trailing dash; "Server-<id>" when nothing is left.
func sanitizeHostname(name, id string) string {
	var b strings.Builder
	for _, c := range name {
		switch {
		case c == ' ' || c == '_' || c == '.':
			b.WriteByte('-')
		case c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			b.WriteRune(c)
		}
	}
	h := strings.ToLower(b.String())
	if len(h) > 63 {
		h = h[:63]
	}
	h = strings.Trim(h, "-")
	if h == "" {
		return "Server-" + id
	}
	return h
}

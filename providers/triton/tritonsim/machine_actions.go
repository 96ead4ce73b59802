package tritonsim

import (
	"net/http"
	"net/netip"
	"regexp"
	"strings"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

const codeMissingParameter = "MissingParameter"

// aliasPattern is VMAPI's rule for machine names (aliases).
var aliasPattern = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9_.-]{0,188}$`)

// createRequest is CreateMachine's body as triton-go sends it: fixed
// fields, plus tag.<key> and metadata.<key> entries.
type createRequest map[string]any

func (c createRequest) str(key string) (string, bool) {
	v, set := c[key]
	if !set {
		return "", true
	}
	s, isString := v.(string)
	return s, isString
}

// createMachine serves CreateMachine: 201 with the machine, provisioning
// until it settles (Options.ProvisioningReads reads, or Advance).
func (s *Server) createMachine(r *http.Request) simkit.Response {
	var req createRequest
	if fail := decode(r, &req); fail != nil {
		return *fail
	}
	m, fail := s.st.machineFromRequest(req)
	if fail != nil {
		return *fail
	}
	volumes, fail := s.st.requestedVolumes(req, &m)
	if fail != nil {
		return *fail
	}
	m.State = StateProvisioning
	if fail := s.st.allowProvision(&m); fail != nil {
		return *fail
	}
	added, err := s.st.addMachine(m)
	if err != nil {
		return invalid("%s", err.Error())
	}
	caller := callerOf(r)
	s.st.settling.Start(added.ID, func() {
		added.State = StateRunning
		s.st.touch(added)
		s.st.record(added.ID, auditProvision, caller)
	})
	s.st.mountVolumes(added, volumes)
	resp := created(s.st.machineJSON(added))
	resp.Header = http.Header{"Location": {"/" + s.opts.Account + "/machines/" + added.ID}}
	return resp
}

// machineFromRequest validates a create request as CloudAPI and VMAPI
// do: the image exists (404), the package and networks exist, the name is
// an alias no live machine has, tags and metadata are valid (409).
func (st *state) machineFromRequest(req createRequest) (Machine, *simkit.Response) {
	bad := func(resp simkit.Response) (Machine, *simkit.Response) { return Machine{}, &resp }
	name, okName := req.str("name")
	pkg, okPkg := req.str("package")
	image, okImage := req.str("image")
	fw, okFW := req["firewall_enabled"].(bool)
	if !okName || !okPkg || !okImage || !okFW && req["firewall_enabled"] != nil {
		return bad(invalid("name, package and image must be strings, firewall_enabled a boolean"))
	}
	switch {
	case image == "":
		return bad(failCode(http.StatusConflict, codeMissingParameter, "image is required"))
	case pkg == "":
		return bad(failCode(http.StatusConflict, codeMissingParameter, "package is required"))
	}
	if _, found := st.images.Get(image); !found {
		return bad(notFound("image", image))
	}
	if _, found := st.pkg(pkg); !found {
		return bad(invalid("package %s does not exist", pkg))
	}
	if name != "" && !aliasPattern.MatchString(name) {
		return bad(invalid("name %q is not a valid machine name", name))
	}
	if name != "" && st.nameTaken(name) {
		return bad(invalid("a machine named %q already exists", name))
	}
	m := Machine{Name: name, Package: pkg, Image: image, FirewallEnabled: fw,
		Tags: map[string]any{}, Metadata: map[string]string{}}
	if name == "" {
		m.ID = st.uuid("machine")
		m.Name = m.ID[:8]
	}
	nics, fail := st.requestedNICs(req["networks"])
	if fail != nil {
		return bad(*fail)
	}
	m.NICs = nics
	if fail := splitTagsAndMetadata(req, &m); fail != nil {
		return bad(*fail)
	}
	return m, nil
}

// ipFree reports whether ip is an address of network n no NIC has.
func (st *state) ipFree(n *Network, ip string) bool {
	addr, err := netip.ParseAddr(ip)
	prefix, perr := netip.ParsePrefix(n.Subnet)
	if err != nil || perr != nil || !prefix.Contains(addr) {
		return false
	}
	for _, m := range st.machines.All() {
		for _, nic := range m.NICs {
			if nic.IP == addr.String() && m.State != StateDeleted {
				return false
			}
		}
	}
	return true
}

func (st *state) nameTaken(name string) bool {
	for _, m := range st.machines.All() {
		if m.Name == name && m.State != StateDeleted {
			return true
		}
	}
	return false
}

// requestedNICs reads "networks": network IDs (or names), or objects
// {"ipv4_uuid", "ipv4_ips"} as triton-go sends them; none means the
// default public and fabric networks.
func (st *state) requestedNICs(v any) ([]NIC, *simkit.Response) {
	if v == nil {
		return nil, nil
	}
	list, isList := v.([]any)
	if !isList {
		resp := invalid("networks must be an array")
		return nil, &resp
	}
	var nics []NIC
	for _, item := range list {
		var nic NIC
		switch n := item.(type) {
		case string:
			nic.Network = n
		case map[string]any:
			nic.Network, _ = n["ipv4_uuid"].(string)
			if ips, _ := n["ipv4_ips"].([]any); len(ips) > 0 {
				nic.IP, _ = ips[0].(string)
			}
		}
		n, found := st.network(nic.Network)
		if !found || nic.Network == "" {
			resp := invalid("network %v does not exist", item)
			return nil, &resp
		}
		if nic.IP != "" && !st.ipFree(n, nic.IP) {
			resp := invalid("IP %s is not a free address of network %s", nic.IP, n.ID)
			return nil, &resp
		}
		nics = append(nics, nic)
	}
	return nics, nil
}

// splitTagsAndMetadata moves the request's tag.<key> and metadata.<key>
// entries to m, validating them as the tag and metadata endpoints do.
func splitTagsAndMetadata(req createRequest, m *Machine) *simkit.Response {
	for k, v := range req {
		if key, isTag := strings.CutPrefix(k, "tag."); isTag {
			m.Tags[key] = v
		}
		if key, isMeta := strings.CutPrefix(k, "metadata."); isMeta {
			s, isString := v.(string)
			if !isString {
				resp := invalid("metadata %s must be a string", key)
				return &resp
			}
			m.Metadata[key] = s
		}
	}
	if err := validateTags(m.Tags); err != nil {
		resp := validationFailed("%s", err.Error())
		return &resp
	}
	return nil
}

// deleteMachine serves DeleteMachine: 204, the machine deleted (410 on
// GET until purged); 409 under deletion protection.
func (s *Server) deleteMachine(r *http.Request) simkit.Response {
	m, fail := s.liveMachine(r)
	if fail != nil {
		return *fail
	}
	if m.DeletionProtection {
		return failCode(http.StatusConflict, "CannotDestroyMachine", "VM %s has deletion protection enabled", m.ID)
	}
	s.st.job(m.ID, auditDestroy, callerOf(r))
	s.st.destroy(m)
	return noContent()
}

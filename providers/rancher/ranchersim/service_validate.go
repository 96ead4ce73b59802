package ranchersim

import (
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"slices"
	"strings"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// serviceInput is what a POST or PUT of a service may set (a PUT only
// the fields the schema marks updatable; the others are dropped).
type serviceInput struct {
	Name                *string        `json:"name"`
	StackID             *string        `json:"stackId"`
	ExternalID          *string        `json:"externalId"`
	Description         *string        `json:"description"`
	Scale               *int           `json:"scale"`
	StartOnCreate       bool           `json:"startOnCreate"`
	LaunchConfig        *LaunchConfig  `json:"launchConfig"`
	LBConfig            *LBConfig      `json:"lbConfig"`
	ExternalIPAddresses []string       `json:"externalIpAddresses"`
	Hostname            *string        `json:"hostname"`
	HealthCheck         *HealthCheck   `json:"healthCheck"`
	Metadata            map[string]any `json:"metadata"`
}

// decodeUpdate reads a PUT's body into in, keeping only the fields def
// marks updatable: Cattle drops the others without an error.
func decodeUpdate(r *http.Request, def schemaDef, in any) *simkit.Response {
	var body map[string]json.RawMessage
	if resp := decode(r, &body); resp != nil {
		return resp
	}
	for k := range body {
		if !def.fields[k].Update {
			delete(body, k)
		}
	}
	b, err := json.Marshal(body)
	if err == nil {
		err = json.Unmarshal(b, in)
	}
	if err != nil {
		var te *json.UnmarshalTypeError
		field := ""
		if errors.As(err, &te) {
			field = te.Field[strings.LastIndex(te.Field, ".")+1:]
		}
		resp := invalid(codeInvalidFormat, field)
		return &resp
	}
	return nil
}

// problem is a 422: a gdapi code about a field.
type problem struct{ code, field string }

func (p *problem) response() simkit.Response { return invalid(p.code, p.field) }

// checkCreate vets a new service of kind.
func (st *state) checkCreate(kind string, in *serviceInput) *problem {
	if _, bad := checkName(deref(in.Name)); bad {
		return nameProblem(deref(in.Name))
	}
	switch id := deref(in.StackID); {
	case id == "":
		return &problem{codeMissingRequired, "stackId"}
	case st.liveStack2(id) == nil:
		return &problem{codeInvalidReference, "stackId"}
	case st.nameTaken(id, *in.Name, ""):
		return &problem{codeNotUnique, "name"}
	}
	if kind == KindLoadBalancer {
		if in.LaunchConfig == nil {
			return &problem{codeMissingRequired, "launchConfig"}
		}
		if in.LBConfig == nil {
			return &problem{codeMissingRequired, "lbConfig"}
		}
	}
	return st.checkFields(in)
}

// checkFields vets the fields a POST or PUT sets.
func (st *state) checkFields(in *serviceInput) *problem {
	if in.Scale != nil && *in.Scale < 0 {
		return &problem{codeMinLimit, "scale"}
	}
	if p := checkLaunchConfig(in.LaunchConfig); p != nil {
		return p
	}
	if p := st.checkLBConfig(in.LBConfig); p != nil {
		return p
	}
	for _, ip := range in.ExternalIPAddresses {
		if net.ParseIP(ip) == nil {
			return &problem{codeInvalidFormat, "externalIpAddresses"}
		}
	}
	if hc := in.HealthCheck; hc != nil {
		switch {
		case hc.Port == 0:
			return &problem{codeMissingRequired, "port"}
		case hc.Port < 1:
			return &problem{codeMinLimit, "port"}
		case hc.Port > 65535:
			return &problem{codeMaxLimit, "port"}
		}
	}
	return nil
}

func nameProblem(name string) *problem {
	switch {
	case name == "":
		return &problem{codeMissingRequired, "name"}
	case len(name) > 63:
		return &problem{codeMaxLength, "name"}
	}
	return &problem{codeInvalidCharacters, "name"}
}

// liveStack2 returns the stack with the ID unless it is removed.
func (st *state) liveStack2(id string) *Stack {
	k, found := st.stacks.Get(id)
	if !found || k.Removed != nil || k.State == StateRemoving {
		return nil
	}
	return k
}

// checkLaunchConfig vets a launch config's ports.
func checkLaunchConfig(lc *LaunchConfig) *problem {
	if lc == nil {
		return nil
	}
	for _, p := range slices.Concat(lc.Ports, lc.Expose) {
		if _, _, _, err := parsePort(p); err != nil {
			return &problem{codeInvalidFormat, "ports"}
		}
	}
	return nil
}

// checkLBConfig vets a load balancer's config and fills its port rules'
// default protocol (http).
func (st *state) checkLBConfig(c *LBConfig) *problem {
	if c == nil {
		return nil
	}
	for i := range c.PortRules {
		if p := st.checkPortRule(&c.PortRules[i]); p != nil {
			return p
		}
	}
	if c.DefaultCertificateID != "" && st.liveCertificate(c.DefaultCertificateID) == nil {
		return &problem{codeInvalidReference, "defaultCertificateId"}
	}
	for _, id := range c.CertificateIDs {
		if st.liveCertificate(id) == nil {
			return &problem{codeInvalidReference, "certificateIds"}
		}
	}
	if sp := c.StickinessPolicy; sp != nil && sp.Mode != "" && !slices.Contains(StickinessModes, sp.Mode) {
		return &problem{codeInvalidOption, "mode"}
	}
	return nil
}

func (st *state) checkPortRule(pr *PortRule) *problem {
	if pr.Protocol == "" {
		pr.Protocol = "http"
	}
	switch {
	case pr.SourcePort == 0:
		return &problem{codeMissingRequired, "sourcePort"}
	case pr.SourcePort < 1:
		return &problem{codeMinLimit, "sourcePort"}
	case pr.SourcePort > 65535:
		return &problem{codeMaxLimit, "sourcePort"}
	case pr.TargetPort < 0:
		return &problem{codeMinLimit, "targetPort"}
	case pr.TargetPort > 65535:
		return &problem{codeMaxLimit, "targetPort"}
	case pr.Priority < 0:
		return &problem{codeMinLimit, "priority"}
	case !slices.Contains(Protocols, pr.Protocol):
		return &problem{codeInvalidOption, "protocol"}
	}
	if pr.ServiceID != "" {
		if _, ok := st.liveService(pr.ServiceID); !ok {
			return &problem{codeInvalidReference, "serviceId"}
		}
	}
	return nil
}

// checkLinks vets service links: each names a live service.
func (st *state) checkLinks(links []ServiceLink) *problem {
	for _, l := range links {
		if l.ServiceID == "" {
			return &problem{codeMissingRequired, "serviceId"}
		}
		if _, ok := st.liveService(l.ServiceID); !ok {
			return &problem{codeInvalidReference, "serviceId"}
		}
	}
	return nil
}

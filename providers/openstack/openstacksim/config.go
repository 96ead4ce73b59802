package openstacksim

import (
	"fmt"
	"strings"
)

// CloudConfig returns the cloud.conf (INI, as the OpenStack
// cloud-controller-manager reads with --cloud-config) that points a CCM at
// this server: [Global] credentials of the first user and the region,
// [LoadBalancer] the default floating network and subnet, [Route] the
// default router. Call it after Start.
func (s *Server) CloudConfig() string { return s.CloudConfigFor(s.URL()) }

// CloudConfigFor is CloudConfig for the server served at baseURL (e.g.
// when mounted with Handler).
func (s *Server) CloudConfigFor(baseURL string) string {
	u := s.firstUser()
	d := s.Defaults()
	var b strings.Builder
	kv := func(k, v string) {
		if v != "" {
			fmt.Fprintf(&b, "%s = %s\n", k, iniValue(v))
		}
	}
	b.WriteString("[Global]\n")
	kv("auth-url", strings.TrimSuffix(baseURL, "/")+identityPrefix+"/v3")
	kv("username", u.Name)
	kv("password", u.Password)
	kv("user-domain-name", u.Domain)
	kv("project-name", u.Project)
	kv("project-domain-name", u.ProjectDomain)
	kv("region", s.opts.Region)
	if d.SubnetID != "" || d.FloatingNetworkID != "" {
		b.WriteString("\n[LoadBalancer]\n")
		kv("subnet-id", d.SubnetID)
		kv("floating-network-id", d.FloatingNetworkID)
	}
	if d.RouterID != "" {
		b.WriteString("\n[Route]\n")
		kv("router-id", d.RouterID)
	}
	return b.String()
}

// iniValue quotes v when gcfg would otherwise misread it.
func iniValue(v string) string {
	if !strings.ContainsAny(v, ";#\"\\ \t") {
		return v
	}
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(v) + `"`
}

// Env returns the standard OpenStack client variables (as gophercloud's
// openstack.AuthOptionsFromEnv reads them) for the server served at
// baseURL, with the first user's credentials. The network and router IDs a
// CCM also needs are in CloudConfig, also served at /_sim/cloud.conf.
func (s *Server) Env(baseURL string) map[string]string {
	u := s.firstUser()
	return map[string]string{
		"OS_AUTH_URL":             strings.TrimSuffix(baseURL, "/") + identityPrefix + "/v3",
		"OS_USERNAME":             u.Name,
		"OS_PASSWORD":             u.Password,
		"OS_USER_DOMAIN_NAME":     u.Domain,
		"OS_PROJECT_NAME":         u.Project,
		"OS_PROJECT_DOMAIN_NAME":  u.ProjectDomain,
		"OS_REGION_NAME":          s.opts.Region,
		"OS_INTERFACE":            "public",
		"OS_IDENTITY_API_VERSION": "3",
	}
}

// firstUser is a copy of the first user, whose password SetPassword may
// change.
func (s *Server) firstUser() User {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.opts.Users[0]
}

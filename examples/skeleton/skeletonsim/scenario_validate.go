package skeletonsim

import (
	"fmt"
	"net/netip"
	"regexp"
	"slices"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// tokenPattern is RFC 6750's b64token without "~": a token that needs no
// quoting in an Authorization header, an env file or a shell.
var tokenPattern = regexp.MustCompile(`^[A-Za-z0-9._+/-]+=*$`)

// validate reports every problem with what sc holds besides its header.
func (sc *Scenario) validate() field.ErrorList {
	var errs field.ErrorList
	if sc.Token != "" && !tokenPattern.MatchString(sc.Token) {
		errs = append(errs, field.Invalid(field.NewPath("token"), field.OmitValueType{},
			"must be letters, digits and -._+/ followed by optional ="))
	}
	if sc.PageSize < 0 || sc.PageSize > MaxPerPage {
		errs = append(errs, field.Invalid(field.NewPath("pageSize"), sc.PageSize, fmt.Sprintf("must be 1 to %d (0 for the default, %d)", MaxPerPage, DefaultPerPage)))
	}

	names := map[string]int{} // instance name -> how many
	for i, si := range sc.Instances {
		errs = append(errs, si.validate(field.NewPath("instances").Index(i))...)
		names[si.Name]++
	}
	for i, sl := range sc.LoadBalancers {
		errs = append(errs, sl.validate(field.NewPath("loadBalancers").Index(i), names)...)
	}
	return errs
}

func (si ScenarioInstance) validate(p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if si.Name == "" {
		errs = append(errs, field.Required(p.Child("name"), ""))
	}
	if si.State != "" && si.State != StatusRunning && si.State != StatusStopped {
		errs = append(errs, field.NotSupported(p.Child("state"), si.State, []string{StatusRunning, StatusStopped}))
	}
	errs = append(errs, validateAddress(p.Child("privateIPv4"), si.PrivateIPv4, ipv4)...)
	errs = append(errs, validateAddress(p.Child("publicIPv4"), si.PublicIPv4, ipv4)...)
	errs = append(errs, validateAddress(p.Child("publicIPv6"), si.PublicIPv6, ipv6)...)
	return errs
}

// Address families for validateAddress.
const (
	ipv4 = "IPv4"
	ipv6 = "IPv6"
)

// validateAddress accepts "", "none" and plain addresses of family.
func validateAddress(p *field.Path, s, family string) field.ErrorList {
	if s == "" || s == "none" {
		return nil
	}
	a, err := netip.ParseAddr(s)
	if err != nil || a.Zone() != "" || (family == ipv4) != a.Is4() {
		return field.ErrorList{field.Invalid(p, s, fmt.Sprintf(`must be an %s address or "none"`, family))}
	}
	return nil
}

// validate checks a load balancer by the API's own rules, with members
// named by instance name; names counts the scenario's instances by name.
func (sl ScenarioLoadBalancer) validate(p *field.Path, names map[string]int) field.ErrorList {
	var errs field.ErrorList
	spec := sl.spec(nil) // members resolve to "": checked by name below
	setDefaults(&spec)
	for _, problem := range validateSpec(&spec) {
		errs = append(errs, field.Invalid(p, sl.Name, problem))
	}
	seen := map[string]bool{}
	for i, name := range sl.Members {
		switch n := names[name]; {
		case seen[name]:
			errs = append(errs, field.Duplicate(p.Child("members").Index(i), name))
		case n == 0:
			errs = append(errs, field.NotFound(p.Child("members").Index(i), name))
		case n > 1:
			errs = append(errs, field.Invalid(p.Child("members").Index(i), name, fmt.Sprintf("ambiguous: %d instances have this name", n)))
		}
		seen[name] = true
	}
	statuses := []string{StatusActive, StatusProvisioning, StatusError}
	if sl.Status != "" && !slices.Contains(statuses, sl.Status) {
		errs = append(errs, field.NotSupported(p.Child("status"), sl.Status, statuses))
	}
	if sl.ErrorMessage != "" && sl.Status != StatusError {
		errs = append(errs, field.Forbidden(p.Child("errorMessage"), "only a load balancer in status error has one"))
	}
	errs = append(errs, validateAddress(p.Child("ipv4"), sl.IPv4, ipv4)...)
	return errs
}

package tritonsim

import (
	"fmt"
	"net/http"
	"slices"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// Limit is a provisioning limit of the account, as GetAccountLimits
// serves it (sdc-cloudapi docs/index.md "GetAccountLimits", its
// provision_limits plugin): by "machines" (how many), "ram" (MiB) or
// "quota" (disk, GiB) up to Value, over all the account's machines or,
// with Check, those of an image name ("image"), an image OS ("os") or a
// brand ("brand"). Used is what the live machines use, computed when
// served.
type Limit struct {
	By    string `json:"by"`
	Value int64  `json:"value"`
	Used  int64  `json:"used"`
	Check string `json:"check,omitempty"`
	OS    string `json:"os,omitempty"`
	Image string `json:"image,omitempty"`
	Brand string `json:"brand,omitempty"`
}

// limitKinds are what a limit counts by; limitChecks what it may be
// restricted to.
var (
	limitKinds  = []string{"machines", "ram", "quota"}
	limitChecks = []string{"", "image", "os", "brand"}
)

// validate reports what is wrong with l, which the plugin's configuration
// would refuse.
func (l Limit) validate() error {
	if !slices.Contains(limitKinds, l.By) {
		return fmt.Errorf("by %q is not one of %v", l.By, limitKinds)
	}
	if !slices.Contains(limitChecks, l.Check) {
		return fmt.Errorf("check %q is not one of %q", l.Check, limitChecks)
	}
	if l.Value < 0 {
		return fmt.Errorf("value %d is negative", l.Value)
	}
	return nil
}

// limitApplies reports whether m counts against l.
func (st *state) limitApplies(l Limit, m *Machine) bool {
	img, _ := st.images.Get(m.Image)
	switch l.Check {
	case "image":
		return img != nil && img.Name == l.Image
	case "os":
		return img != nil && img.OS == l.OS
	case "brand":
		return cmpOr(m.Brand, "joyent") == l.Brand
	}
	return true
}

// limits are the account's limits with what its machines (not deleted
// or failed) use: a count, their RAM in MiB or their disk in GiB, as the
// plugin's setLimitsUsed counts.
func (st *state) limits() []Limit {
	out := slices.Clone(st.opts.Limits)
	for i := range out {
		l := &out[i]
		l.Used = 0
		for _, m := range st.machines.All() {
			if m.State == StateDeleted || m.State == StateFailed || !st.limitApplies(*l, m) {
				continue
			}
			switch l.By {
			case "ram":
				l.Used += int64(m.Memory)
			case "quota":
				l.Used += int64(m.Disk) / 1024
			default:
				l.Used++
			}
		}
	}
	if out == nil {
		out = []Limit{}
	}
	return out
}

// Limits returns the account's limits with their use, as GetAccountLimits
// serves them.
func (s *Server) Limits() []Limit {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st.limits()
}

// getLimits serves GetAccountLimits (GET /{account}/limits): the
// account's limits with their use; [] when it has none (the plugin off).
func (s *Server) getLimits(*http.Request) simkit.Response { return ok(s.st.limits()) }

// quotaExceeded is the plugin's refusal (provision_limits.js QUOTA_ERR).
const quotaExceeded = "Quota exceeded; to have your limits raised please contact Support"

// allowProvision is the plugin's allowProvision for m, a machine about to
// be created with its package's RAM and disk: 403 NotAuthorized when it
// would take a limit that applies to it over its value.
func (st *state) allowProvision(m *Machine) *simkit.Response {
	p, _ := st.pkg(m.Package)
	for _, l := range st.limits() {
		if !st.limitApplies(l, m) {
			continue
		}
		switch l.By {
		case "ram":
			l.Used += p.Memory
		case "quota":
			l.Used += p.Disk / 1024
		default:
			l.Used++
		}
		if l.Used > l.Value {
			resp := failCode(http.StatusForbidden, codeNotAuthorized, quotaExceeded)
			return &resp
		}
	}
	return nil
}

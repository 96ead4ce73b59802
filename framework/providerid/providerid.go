// Package providerid formats and parses the spec.providerID a cloud writes on
// its Nodes.
//
// A providerID has the form "<scheme>://<id>". Existing cloud-controller-managers
// wrote slight variations of it that ccmkit must keep accepting so clusters can
// migrate without re-registering Nodes:
//
//	digitalocean://123               DigitalOcean
//	openstack:///<uuid>              OpenStack (empty host part)
//	openstack://RegionOne/<uuid>     OpenStack with OS_CCM_REGIONAL=true
//	brightbox://srv-abc12            Brightbox
//	triton://<uuid>, joyent://<uuid> Triton and its historic scheme
//	rancher://<uuid>                 Rancher 1.x (Cattle)
//
// A [Codec] holds one cloud's format: [Codec.Format] writes the canonical form
// and [Codec.Parse] accepts every historic one.
package providerid

import (
	"errors"
	"fmt"
	"strings"
)

var (
	// ErrMalformed is wrapped by Parse errors for a providerID that is not
	// "<scheme>://[region/]<id>" or whose ID is empty.
	ErrMalformed = errors.New("malformed providerID")
	// ErrWrongScheme is wrapped by Parse errors for a well-formed providerID
	// that belongs to another cloud.
	ErrWrongScheme = errors.New("providerID of another cloud")
	// ErrOtherRegion is wrapped by Parse errors for a providerID that names
	// a region other than Codec.Region: this CCM cannot see that instance,
	// so it must never conclude it is gone.
	ErrOtherRegion = errors.New("providerID of another region")
)

// Codec formats and parses a cloud's spec.providerID.
type Codec struct {
	Scheme      string   // "digitalocean"
	TripleSlash bool     // format as "scheme:///id" (OpenStack) instead of "scheme://id"
	Legacy      []string // other schemes accepted by Parse (historic names)
	// Region, when set, is the region this CCM serves: Parse rejects a
	// "scheme://region/id" naming another one (a lookup in this region would
	// answer "not found" and the Node would be deleted).
	Region string
}

// ID is a parsed providerID.
type ID struct {
	Scheme string // as found
	Region string // "openstack://RegionOne/<id>" -> "RegionOne"; "" otherwise
	Value  string // the cloud's instance ID
}

// Format returns the canonical providerID of the instance id.
func (c Codec) Format(id string) string {
	if c.TripleSlash {
		return c.Scheme + ":///" + id
	}
	return c.Scheme + "://" + id
}

// Parse parses a providerID in any of the forms "scheme://id",
// "scheme:///id" and "scheme://region/id", where scheme is c.Scheme or one of
// c.Legacy. Schemes compare case-insensitively; the ID is returned verbatim.
// Surrounding whitespace is ignored.
//
// Errors wrap [ErrMalformed], [ErrWrongScheme] or [ErrOtherRegion].
func (c Codec) Parse(providerID string) (ID, error) {
	s := strings.TrimSpace(providerID)
	scheme, rest, ok := strings.Cut(s, "://")
	if !ok || scheme == "" {
		return ID{}, fmt.Errorf("%w %q: want %s", ErrMalformed, providerID, c.Format("<id>"))
	}
	if !c.accepts(scheme) {
		return ID{}, fmt.Errorf("%w: providerID %q has scheme %q, want %s", ErrWrongScheme, providerID, scheme, c.schemes())
	}

	id := ID{Scheme: scheme}
	switch {
	case strings.HasPrefix(rest, "/"): // scheme:///id
		id.Value = rest[1:]
	case strings.Contains(rest, "/"): // scheme://region/id
		id.Region, id.Value, _ = strings.Cut(rest, "/")
	default: // scheme://id
		id.Value = rest
	}
	switch {
	case id.Value == "":
		return ID{}, fmt.Errorf("%w %q: empty instance ID", ErrMalformed, providerID)
	case strings.Contains(id.Value, "/"):
		return ID{}, fmt.Errorf("%w %q: instance ID contains %q", ErrMalformed, providerID, "/")
	case id.Region != "" && c.Region != "" && id.Region != c.Region:
		return ID{}, fmt.Errorf("%w: providerID %q names region %q; this cloud controller manager serves %q", ErrOtherRegion, providerID, id.Region, c.Region)
	}
	return id, nil
}

func (c Codec) accepts(scheme string) bool {
	if strings.EqualFold(scheme, c.Scheme) {
		return true
	}
	for _, l := range c.Legacy {
		if strings.EqualFold(scheme, l) {
			return true
		}
	}
	return false
}

// schemes describes the accepted schemes for error messages.
func (c Codec) schemes() string {
	s := fmt.Sprintf("%q", c.Scheme)
	if len(c.Legacy) > 0 {
		s += fmt.Sprintf(" (or legacy %q)", c.Legacy)
	}
	return s
}

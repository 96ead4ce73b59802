package fuzzkit

import (
	"errors"
	"strings"
	"testing"

	"github.com/ccmkit/ccmkit/framework/providerid"
)

// ProviderID checks a providerID codec on fuzzed text s, twice over:
//   - as a providerID: Parse never panics, fails only with one of the
//     package's sentinel errors, and what it accepts formats back to a
//     providerID that parses to the same instance (and, written with its
//     region, to the same ID);
//   - as an instance ID: when s is a valid one (not empty, no "/", no
//     surrounding space), Parse(Format(s)) gives s in the codec's scheme.
func ProviderID(t testing.TB, c providerid.Codec, s string) {
	t.Helper()
	id, err := c.Parse(s)
	switch {
	case err != nil:
		if !errors.Is(err, providerid.ErrMalformed) && !errors.Is(err, providerid.ErrWrongScheme) && !errors.Is(err, providerid.ErrOtherRegion) {
			t.Errorf("Parse(%q): error wraps no sentinel: %v", s, err)
		}
	case id.Value == "" || strings.Contains(id.Value, "/"):
		t.Errorf("Parse(%q) = %+v: not an instance ID", s, id)
	default:
		canonical := providerid.ID{Scheme: c.Scheme, Value: id.Value}
		roundTrip(t, c, c.Format(id.Value), canonical)
		if id.Region != "" {
			roundTrip(t, c, id.Scheme+"://"+id.Region+"/"+id.Value, id)
		}
	}
	if s != "" && !strings.Contains(s, "/") && strings.TrimSpace(s) == s {
		roundTrip(t, c, c.Format(s), providerid.ID{Scheme: c.Scheme, Value: s})
	}
}

func roundTrip(t testing.TB, c providerid.Codec, s string, want providerid.ID) {
	t.Helper()
	got, err := c.Parse(s)
	if err != nil || got != want {
		t.Errorf("Parse(%q) = %+v, %v; want %+v", s, got, err, want)
	}
}

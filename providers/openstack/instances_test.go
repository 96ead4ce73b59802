package openstack

import "testing"

// TestServerValidate: a server Nova would never answer with is refused,
// and the error names what is wrong with it.
func TestServerValidate(t *testing.T) {
	const id = "00000001-0008-4000-8000-000000000001"
	if err := (&server{ID: id, Name: "node-1"}).validate(); err != nil {
		t.Errorf("a well-formed server: %v", err)
	}
	for _, s := range []server{
		{Name: "node-1"},
		{ID: "fuzz-unknown-value", Name: "node-1"},
		{ID: "00000001000840008000000000000001", Name: "node-1"}, // no dashes: not how Nova writes one
		{ID: "{00000001-0008-4000-8000-00000000001}", Name: "node-1"},
		{ID: id},
	} {
		if err := s.validate(); err == nil {
			t.Errorf("server %+v: no error", s)
		}
	}
}

// TestInstanceTypeMalformedFlavor: a server's flavor that names no
// flavor is an error, never an empty instance type (the label is set
// once).
func TestInstanceTypeMalformedFlavor(t *testing.T) {
	var f flavorNames
	if typ, err := f.instanceType(t.Context(), nil, map[string]any{"original_name": "m1.small"}); err != nil || typ != "m1.small" {
		t.Errorf("original_name m1.small: %q, %v", typ, err)
	}
	for _, flavor := range []map[string]any{nil, {}, {"original_name": ""}, {"original_name": 1.5}, {"id": nil}, {"id": ""}} {
		if typ, err := f.instanceType(t.Context(), nil, flavor); err == nil {
			t.Errorf("flavor %v: %q, no error", flavor, typ)
		}
	}
}

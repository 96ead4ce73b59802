package ranchersim

import (
	"encoding/json"
	"net/http"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestFilterKeys: Cattle's ParseCollectionAttributes.parseFilters splits a
// key at its LAST underscore into a field name and a modifier (NameAndOp)
// and keeps it only when the name is a collection filter of the type and
// the modifier one of that filter's modifiers; every other key is
// ignored. So external_id (the rancher CCM's stack lookup) is the field
// "external" with the modifier "id": ignored, not externalId; state_like
// is ignored (state is an enum: eq, ne, null, notnull); name_eq is name.
func TestFilterKeys(t *testing.T) {
	s := NewServer(t, Options{ProvisioningReads: -1})
	lbs := s.AddStack(Stack{Name: "kubernetes-loadbalancers", ExternalID: "kubernetes-loadbalancers://"})
	other := s.AddStack(Stack{Name: "other", ExternalID: "catalog://x"})
	both := []string{lbs.ID, other.ID}
	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"external_id=kubernetes-loadbalancers://", both},
		{"external_id=nope", both},
		{"externalId=kubernetes-loadbalancers://", []string{lbs.ID}},
		{"externalId_prefix=catalog", []string{other.ID}},
		{"name_eq=other", []string{other.ID}},
		{"state_like=act%25", both},
		{"name_bogus=x&unknown=y", both},
		{"name=other&external_id=kubernetes-loadbalancers://", []string{other.ID}},
	} {
		a := call(t, s, http.MethodGet, "/stacks?"+tc.query, "")
		if got := a.dataIDs(); a.status != http.StatusOK || !slices.Equal(got, tc.want) {
			t.Errorf("?%s: %d %v, want %v", tc.query, a.status, got, tc.want)
		}
	}
	filters, _ := call(t, s, http.MethodGet, "/stacks?external_id=x&externalId=y", "").body["filters"].(map[string]any)
	if _, ok := filters["external"]; ok || len(filters) != len(mustSchema("stack").filters) {
		t.Errorf("filters = %v, want one key per collection filter, none for external_id", filters)
	}
	if c, _ := filters["externalId"].([]any); len(c) != 1 || filters["name"] != nil {
		t.Errorf("filters = %v, want externalId's condition and name null", filters)
	}
}

// TestFilterConditions: the conditions of one field all hold
// (JooqUtils.listToCondition joins them with AND), so the Rancher CLI's
// state_ne=inactive&state_ne=stopped&state_ne=removing keeps neither
// state, and name=a&name=b matches nothing; a comparison with a null
// field is false in SQL: only _null matches it.
func TestFilterConditions(t *testing.T) {
	s := NewServer(t, Options{ProvisioningReads: -1})
	a := s.AddHost(Host{Hostname: "a", Name: "alpha"})
	b := s.AddHost(Host{Hostname: "b", State: StateInactive})
	c := s.AddHost(Host{Hostname: "c", Name: "gamma", State: StateDisconnected})
	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"state_ne=inactive&state_ne=disconnected", []string{a.ID}},
		{"state_ne=inactive", []string{a.ID, c.ID}},
		{"name=alpha&name=gamma", nil},
		{"name=alpha&name=alpha", []string{a.ID}},
		{"name_ne=other", []string{a.ID, c.ID}},
		{"name_notlike=%25a", nil},
		{"name_null=1", []string{b.ID}},
		{"name_notnull", []string{a.ID, c.ID}},
	} {
		got := call(t, s, http.MethodGet, "/hosts?"+tc.query, "").dataIDs()
		if !slices.Equal(got, tc.want) {
			t.Errorf("?%s: %v, want %v", tc.query, got, tc.want)
		}
	}
}

// TestFieldsAsJSON: the fields a list filters and sorts by are read from
// a document as its JSON has them (the embedded ipAddresses, a null, an
// omitted empty field, an embedded struct's promoted field), without
// encoding the whole document.
func TestFieldsAsJSON(t *testing.T) {
	s := New(Options{})
	h := s.AddHost(Host{Hostname: "node-1", Labels: map[string]string{"zone": "a"}})
	type inner struct {
		Shadowed string `json:"name"`
		Promoted int    `json:"promoted"`
	}
	docs := []any{
		view{base: "http://x", project: "http://x/p", include: map[string]bool{"ipAddresses": true}}.host(s.st, &h),
		struct {
			inner
			Name  string            `json:"name"`
			Empty string            `json:"empty,omitempty"`
			Nil   *int              `json:"nil"`
			Skip  string            `json:"-"`
			Map   map[string]string `json:"map"`
		}{inner: inner{"hidden", 7}, Name: "top", Map: map[string]string{"k": "v"}},
		map[string]any{"name": "m", "n": 1},
	}
	for i, doc := range docs {
		b, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		var want map[string]any
		if err := json.Unmarshal(b, &want); err != nil {
			t.Fatal(err)
		}
		names := []string{"absent", "empty", "Skip", "-"}
		for k := range want {
			names = append(names, k)
		}
		got := fields(doc, names)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("doc %d: fields (-as JSON +got):\n%s", i, diff)
		}
	}
}

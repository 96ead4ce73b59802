package openstacksim

import (
	"net/http"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/loadbalancers"
)

// TestOctaviaPaginationLinks follows Octavia's PaginationHelper
// (octavia/api/common/pagination.py _make_links and apply) and its own
// functional test test_get_all_limited (octavia/tests/functional/api/v2/
// test_load_balancer.py): a next link on every full page (len >= limit),
// whatever follows; a previous link (first, with page_reverse=True) when
// the request had a marker; links carrying only limit, sort, sort_key and
// the marker, on the path the client asked for; <plural>_links always
// there; a limit below 1 meaning none; page_reverse giving the first
// items before the marker.
func TestOctaviaPaginationLinks(t *testing.T) {
	s, c := setup(t, Options{ProvisioningReads: -1})
	var ids []string
	for _, name := range []string{"a", "b", "c"} {
		lb, err := loadbalancers.Create(ctx(), c.lb, loadbalancers.CreateOpts{Name: name, VipSubnetID: s.Defaults().SubnetID}).Extract()
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, lb.ID)
	}
	raw := rawClient{t: t, token: c.provider.TokenID}
	lbsURL := s.URL() + lbaas + "/loadbalancers"
	type linkJSON struct{ Rel, Href string }
	list := func(url string) (names []string, links []linkJSON) {
		t.Helper()
		status, body := raw.do("GET", url, nil)
		if status != http.StatusOK {
			t.Fatalf("GET %s: %d %v", url, status, body)
		}
		for _, lb := range path(body, "loadbalancers").([]any) {
			names = append(names, path(lb, "name").(string))
		}
		ls, present := path(body, "loadbalancers_links").([]any)
		if !present {
			t.Fatalf("GET %s: no loadbalancers_links in %v", url, body)
		}
		links = []linkJSON{}
		for _, l := range ls {
			links = append(links, linkJSON{path(l, "rel").(string), path(l, "href").(string)})
		}
		return names, links
	}
	for _, tt := range []struct {
		query     string
		names     []string
		links     []linkJSON
		nextNames []string // what the next link's page holds, if there is one
	}{
		// Not full: no links, but the (empty) list of them.
		{query: "", names: []string{"a", "b", "c"}, links: []linkJSON{}},
		// Full with nothing after it: a next link to an empty page.
		{query: "?limit=3", names: []string{"a", "b", "c"},
			links: []linkJSON{{"next", lbsURL + "?limit=3&marker=" + ids[2]}}, nextNames: nil},
		{query: "?limit=2", names: []string{"a", "b"},
			links: []linkJSON{{"next", lbsURL + "?limit=2&marker=" + ids[1]}}, nextNames: []string{"c"}},
		{query: "?limit=2&marker=" + ids[1], names: []string{"c"},
			links: []linkJSON{{"previous", lbsURL + "?limit=2&marker=" + ids[2] + "&page_reverse=True"}}},
		{query: "?limit=1&marker=" + ids[0], names: []string{"b"}, links: []linkJSON{
			{"previous", lbsURL + "?limit=1&marker=" + ids[1] + "&page_reverse=True"},
			{"next", lbsURL + "?limit=1&marker=" + ids[1]},
		}, nextNames: []string{"c"}},
		// page_reverse: the first items before the marker, in order.
		{query: "?limit=2&marker=" + ids[2] + "&page_reverse=True", names: []string{"a", "b"}, links: []linkJSON{
			{"previous", lbsURL + "?limit=2&marker=" + ids[0] + "&page_reverse=True"},
			{"next", lbsURL + "?limit=2&marker=" + ids[1]},
		}, nextNames: []string{"c"}},
		// Filters stay out of the links; sort and sort_key stay in.
		{query: "?name=b&limit=1&sort_key=name", names: []string{"b"},
			links: []linkJSON{{"next", lbsURL + "?limit=1&sort_key=name&marker=" + ids[1]}}, nextNames: []string{"c"}},
		// A limit below 1 is no limit: everything, and a next link.
		{query: "?limit=0", names: []string{"a", "b", "c"},
			links: []linkJSON{{"next", lbsURL + "?limit=None&marker=" + ids[2]}}},
	} {
		names, links := list(lbsURL + tt.query)
		if !slices.Equal(names, tt.names) || !cmp.Equal(links, tt.links) {
			t.Errorf("%s: %v %v, want %v %v", tt.query, names, links, tt.names, tt.links)
			continue
		}
		for _, l := range links {
			if l.Rel == "next" && tt.query != "?limit=0" {
				if next, _ := list(l.Href); !slices.Equal(next, tt.nextNames) {
					t.Errorf("%s: next page %v, want %v", tt.query, next, tt.nextNames)
				}
			}
		}
	}
	// The links repeat the path asked for: /v2 as /v2.0.
	v2URL := s.URL() + lbPrefix + "/v2/lbaas/loadbalancers"
	if _, links := list(v2URL + "?limit=1"); len(links) != 1 || links[0].Href != v2URL+"?limit=1&marker="+ids[0] {
		t.Errorf("links under /v2: %v", links)
	}
	for query, want := range map[string]string{
		"?marker=missing": "Supplied pagination marker 'missing' is not valid.",
		"?limit=x":        "Supplied pagination limit 'x' is not valid.",
	} {
		status, body := raw.do("GET", lbsURL+query, nil)
		if status != http.StatusBadRequest || path(body, "faultstring") != want {
			t.Errorf("%s: %d %v, want 400 %q", query, status, body, want)
		}
	}
	// Every Octavia list has its links.
	for _, p := range []string{"/listeners", "/pools", "/healthmonitors", "/flavors", "/availabilityzones", "/quotas"} {
		_, body := raw.do("GET", s.URL()+lbaas+p, nil)
		key := p[1:]
		if p == "/availabilityzones" {
			key = "availability_zones"
		}
		if links, ok := path(body, key+"_links").([]any); !ok || len(links) != 0 {
			t.Errorf("GET %s: %v, want %s_links []", p, body, key)
		}
	}
}

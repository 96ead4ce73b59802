package ranchersim

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	rancher "github.com/rancher/go-rancher/v2"
)

// hostWithIPs is a host as ?include=ipAddresses answers it, decoded with
// go-rancher's types.
type hostWithIPs struct {
	rancher.Host
	IPAddresses *[]rancher.IpAddress `json:"ipAddresses"`
}

// TestIncludeIPAddresses: ?include=ipAddresses embeds each host's
// ipAddresses link, item for item as the link answers it, in host lists
// (every page) and host gets; without it, or with a name the host schema
// does not offer, nothing is embedded; the host schema advertises the
// link in includeableLinks.
func TestIncludeIPAddresses(t *testing.T) {
	s, c := setup(t, Options{ProvisioningReads: -1})
	a := s.AddHost(Host{Hostname: "a"})
	s.AddHost(Host{Hostname: "b", IPAddresses: []IPAddress{}})
	s.AddHost(Host{Hostname: "c"})

	// Listed two per page through go-rancher: the next links keep include.
	type hostPage struct {
		rancher.Collection
		Data []hostWithIPs `json:"data"`
	}
	var listed []hostWithIPs
	page := &hostPage{}
	if err := c.List("host", filters("include", "ipAddresses", "limit", 2), page); err != nil {
		t.Fatal(err)
	}
	listed = append(listed, page.Data...)
	for pages := 1; page.Pagination != nil && page.Pagination.Next != ""; pages++ {
		if pages > 3 {
			t.Fatal("more than 3 pages of 2 for 3 hosts")
		}
		next := rancher.Resource{Links: map[string]string{"next": page.Pagination.Next}}
		page = &hostPage{}
		if err := c.GetLink(next, "next", page); err != nil {
			t.Fatal(err)
		}
		listed = append(listed, page.Data...)
	}
	if len(listed) != 3 {
		t.Fatalf("listed %d hosts, want 3", len(listed))
	}
	for _, h := range listed {
		if h.IPAddresses == nil {
			t.Fatalf("host %s: no embedded ipAddresses", h.Id)
		}
		var link rancher.IpAddressCollection
		if err := c.GetLink(h.Resource, "ipAddresses", &link); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(link.Data, *h.IPAddresses, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("host %s: embedded addresses (-link +embedded):\n%s", h.Id, diff)
		}
	}
	if got := len(*listed[1].IPAddresses); got != 0 {
		t.Errorf("a host without addresses embeds %d", got)
	}

	// A get, over raw HTTP: the field is an array, and absent unless asked.
	env := s.Env(s.URL())
	for query, want := range map[string]int{
		"include=ipAddresses":                   2,
		"include=ipAddresses&include=instances": 2,
		"include=nosuchlink":                    -1,
		"":                                      -1,
		"include=hosts":                         -1, // a link of ipAddresses, not of hosts
	} {
		got := rawHost(t, env, a.ID, query)
		raw, present := got["ipAddresses"]
		switch {
		case want < 0 && present:
			t.Errorf("?%s: ipAddresses embedded: %v", query, raw)
		case want >= 0 && !present:
			t.Errorf("?%s: ipAddresses not embedded", query)
		case want >= 0:
			var ips []map[string]any
			if err := json.Unmarshal(raw, &ips); err != nil || len(ips) != want || ips[0]["type"] != "ipAddress" || ips[0]["address"] != a.AgentIPAddress {
				t.Errorf("?%s: ipAddresses = %s (%v), want %d ipAddress resources, the agent IP first", query, raw, err, want)
			}
		}
	}

	schema := c.GetTypes()["host"]
	if !slices.Contains(schema.IncludeableLinks, "ipAddresses") {
		t.Errorf("host schema includeableLinks = %v, want ipAddresses among them", schema.IncludeableLinks)
	}
}

// rawHost GETs a host with the query, its fields as raw JSON.
func rawHost(t *testing.T, env map[string]string, id, query string) map[string]json.RawMessage {
	t.Helper()
	u, err := url.Parse(env["CATTLE_URL"] + "/hosts/" + id)
	if err != nil {
		t.Fatal(err)
	}
	u.RawQuery = query
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, u.String(), nil)
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth(env["CATTLE_ACCESS_KEY"], env["CATTLE_SECRET_KEY"])
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var doc map[string]json.RawMessage
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s %v", u, resp.Status, err)
	}
	return doc
}

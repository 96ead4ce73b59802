package openstacksim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// rawClient makes plain HTTP requests with a token, so that the walk
// below depends on no SDK's idea of the API.
type rawClient struct {
	t     *testing.T
	token string
}

// do sends a request and returns the status and the decoded JSON body
// (nil when there is none or it is not JSON).
func (c rawClient) do(method, url string, body any, header ...string) (int, any) {
	c.t.Helper()
	var rd io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			c.t.Fatal(err)
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Accept", "application/json")
	if c.token != "" {
		req.Header.Set("X-Auth-Token", c.token)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, url, err)
	}
	defer func() { _ = resp.Body.Close() }()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatal(err)
	}
	var out any
	_ = json.Unmarshal(data, &out)
	return resp.StatusCode, out
}

// login gets a token and the catalog with password auth.
func login(t *testing.T, s *Server) (rawClient, []any) {
	t.Helper()
	body := map[string]any{"auth": map[string]any{
		"identity": map[string]any{"methods": []string{"password"}, "password": map[string]any{"user": map[string]any{
			"name": DefaultUsername, "password": DefaultPassword, "domain": map[string]string{"name": DefaultDomain},
		}}},
		"scope": map[string]any{"project": map[string]any{"name": DefaultProject, "domain": map[string]string{"name": DefaultDomain}}},
	}}
	data, _ := json.Marshal(body)
	resp, err := http.Post(s.AuthURL()+"/auth/tokens", "application/json", bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	var tok struct {
		Token struct{ Catalog []any } `json:"token"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&tok); err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("token: %d %v", resp.StatusCode, err)
	}
	return rawClient{t: t, token: resp.Header.Get("X-Subject-Token")}, tok.Token.Catalog
}

// path digs into decoded JSON: keys for objects, indexes for arrays.
func path(v any, keys ...any) any {
	for _, k := range keys {
		switch k := k.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			a, _ := v.([]any)
			if k >= len(a) {
				return nil
			}
			v = a[k]
		}
	}
	return v
}

// versionLinks are the self links of a version document in any of the
// three shapes OpenStack services use.
func versionLinks(doc any) []string {
	var versions []any
	switch v := path(doc, "versions").(type) {
	case []any:
		versions = v
	case map[string]any:
		versions, _ = v["values"].([]any)
	}
	if v := path(doc, "version"); v != nil {
		versions = append(versions, v)
	}
	var out []string
	for _, v := range versions {
		links, _ := path(v, "links").([]any)
		for _, l := range links {
			if path(l, "rel") == "self" {
				out = append(out, path(l, "href").(string))
			}
		}
	}
	return out
}

// TestEveryAdvertisedEntryAnswers walks what the simulator advertises:
// every catalog endpoint, the versions each one's document lists (and
// the resources Neutron's version root lists), every Nova microversion
// up to the advertised maximum, and every Neutron extension (its own
// document and the resource, attribute or filter it adds). None may be
// 404.
func TestEveryAdvertisedEntryAnswers(t *testing.T) {
	s := NewServer(t, Options{})
	s.AddServer(NovaServer{Name: "node-1"})
	c, catalog := login(t, s)
	types := map[string]string{}
	for _, svc := range catalog {
		typ := path(svc, "type").(string)
		eps, _ := path(svc, "endpoints").([]any)
		if len(eps) != 3 {
			t.Errorf("%s: %d endpoints, want public, internal and admin", typ, len(eps))
		}
		for _, ep := range eps {
			url := path(ep, "url").(string)
			types[typ] = url
			if typ == "block-storage" || typ == "volumev3" {
				// Cinder's catalog URL is the project's base
				// (/volume/v3/<project ID>), where Cinder serves no
				// document: clients add resource paths to it and find
				// the versions at the root, cutting /v3/<project ID>.
				if status, _ := c.do("GET", url+"/volumes", nil); status != http.StatusOK {
					t.Errorf("%s endpoint %s: GET volumes %d", typ, url, status)
				}
				url = url[:strings.Index(url, "/v3/")+1]
			}
			status, doc := c.do("GET", url, nil)
			if status == http.StatusNotFound || status >= 400 {
				t.Errorf("%s endpoint %s: %d", typ, url, status)
			}
			links := versionLinks(doc)
			if len(links) == 0 {
				t.Errorf("%s endpoint %s: no version links in %v", typ, url, doc)
			}
			for _, href := range slices.Compact(links) {
				walkVersion(t, c, typ, href)
			}
		}
	}
	for _, want := range []string{"identity", "compute", "network", "load-balancer", "image", "block-storage", "volumev3"} {
		if types[want] == "" {
			t.Errorf("catalog has no %s service", want)
		}
	}
	walkMicroversions(t, c, types["compute"])
	walkVolumeMicroversions(t, c, types["block-storage"])
	walkExtensions(t, c, s, types["network"]+"/v2.0")
}

// walkVersion requests a version's self link. Glance serves no document
// at /v2/ (a real one answers 404 there too): its link is the base that
// clients append resource paths to, so the images under it must answer.
func walkVersion(t *testing.T, c rawClient, typ, href string) {
	t.Helper()
	if typ == "image" {
		href += "images"
	}
	status, doc := c.do("GET", href, nil)
	if status != http.StatusOK {
		t.Errorf("%s version %s: %d", typ, href, status)
	}
	resources, _ := path(doc, "resources").([]any)
	for _, res := range resources {
		link := path(res, "links", 0, "href").(string)
		if status, _ := c.do("GET", link, nil); status != http.StatusOK {
			t.Errorf("%s resource %s: %d", typ, link, status)
		}
	}
}

// walkMicroversions asks for servers and flavors at every microversion
// from 2.1 to the advertised maximum, which Nova echoes; one past it is
// 406.
func walkMicroversions(t *testing.T, c rawClient, computeURL string) {
	t.Helper()
	_, doc := c.do("GET", computeURL, nil)
	maxVer, _ := path(doc, "version", "version").(string)
	maxMinor, err := strconv.Atoi(strings.TrimPrefix(maxVer, "2."))
	if err != nil || path(doc, "version", "min_version") != "2.1" {
		t.Fatalf("compute version document %v", doc)
	}
	for minor := 1; minor <= maxMinor; minor++ {
		v := fmt.Sprintf("2.%d", minor)
		for _, p := range []string{"/servers/detail", "/flavors/detail", "/flavors/1/os-extra_specs", "/os-availability-zone"} {
			req, _ := http.NewRequest(http.MethodGet, computeURL+p, nil)
			req.Header.Set("X-Auth-Token", c.token)
			req.Header.Set("OpenStack-API-Version", "compute "+v)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			_ = resp.Body.Close()
			if resp.StatusCode != http.StatusOK || resp.Header.Get("OpenStack-API-Version") != "compute "+v ||
				resp.Header.Get("X-OpenStack-Nova-API-Version") != v {
				t.Errorf("GET %s at %s: %d, version headers %q %q", p, v, resp.StatusCode,
					resp.Header.Get("OpenStack-API-Version"), resp.Header.Get("X-OpenStack-Nova-API-Version"))
			}
		}
	}
	next := fmt.Sprintf("2.%d", maxMinor+1)
	if status, _ := c.do("GET", computeURL+"/servers/detail", nil, "X-OpenStack-Nova-API-Version", next); status != http.StatusNotAcceptable {
		t.Errorf("microversion %s past the maximum: %d, want 406", next, status)
	}
}

// walkVolumeMicroversions asks Cinder for volumes, snapshots, types and
// zones at every microversion from 3.0 to the advertised maximum, which
// Cinder echoes; one past it is 406.
func walkVolumeMicroversions(t *testing.T, c rawClient, volumeURL string) {
	t.Helper()
	_, doc := c.do("GET", volumeURL[:strings.Index(volumeURL, "/v3/")+4], nil)
	maxVer, _ := path(doc, "versions", 0, "version").(string)
	maxMinor, err := strconv.Atoi(strings.TrimPrefix(maxVer, "3."))
	if err != nil || path(doc, "versions", 0, "min_version") != "3.0" {
		t.Fatalf("volume version document %v", doc)
	}
	for minor := 0; minor <= maxMinor; minor++ {
		v := fmt.Sprintf("3.%d", minor)
		for _, p := range []string{"/volumes/detail", "/snapshots/detail", "/types", "/os-availability-zone", "/limits"} {
			req, _ := http.NewRequest(http.MethodGet, volumeURL+p, nil)
			req.Header.Set("X-Auth-Token", c.token)
			req.Header.Set("OpenStack-API-Version", "volume "+v)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			_ = resp.Body.Close()
			if resp.StatusCode != http.StatusOK || resp.Header.Get("OpenStack-API-Version") != "volume "+v {
				t.Errorf("GET %s at %s: %d, version header %q", p, v, resp.StatusCode, resp.Header.Get("OpenStack-API-Version"))
			}
		}
	}
	next := fmt.Sprintf("3.%d", maxMinor+1)
	if status, _ := c.do("GET", volumeURL+"/volumes/detail", nil, "OpenStack-API-Version", "volume "+next); status != http.StatusNotAcceptable {
		t.Errorf("microversion %s past the maximum: %d, want 406", next, status)
	}
}

// extensionProbes request, for each Neutron extension alias, the
// resource, attribute or filter it adds; an advertised alias without a
// probe fails the test, so nothing is advertised unchecked.
var extensionProbes = map[string]func(p probe) bool{
	"agent":                 func(p probe) bool { return p.list("/agents", "agents") == 0 },
	"allowed-address-pairs": func(p probe) bool { return p.has(p.port, "allowed_address_pairs") },
	"availability_zone":     func(p probe) bool { return p.list("/availability_zones", "availability_zones") >= 2 },
	"availability_zone_filter": func(p probe) bool {
		return p.list("/availability_zones?resource=router", "availability_zones") == 1 &&
			p.list("/availability_zones?name=no-such-zone", "availability_zones") == 0
	},
	"network_availability_zone": func(p probe) bool {
		return p.has(p.network, "availability_zones") && p.has(p.network, "availability_zone_hints")
	},
	"router_availability_zone": func(p probe) bool {
		return p.has(p.router, "availability_zones") && p.has(p.router, "availability_zone_hints")
	},
	"binding": func(p probe) bool { return p.has(p.port, "binding:vnic_type") },
	"external-net": func(p probe) bool {
		return p.list("/networks?router:external=True", "networks") > 0 && p.has(p.network, "router:external")
	},
	"extraroute": func(p probe) bool { return p.has(p.router, "routes") },
	"extraroute-atomic": func(p probe) bool {
		return p.status("PUT", "/routers/"+p.id(p.router)+"/add_extraroutes", map[string]any{"router": map[string]any{"routes": []any{}}}) == http.StatusOK
	},
	"filter-validation": func(p probe) bool { return p.status("GET", "/ports?no_such_attribute=1", nil) == http.StatusBadRequest },
	"port-security": func(p probe) bool {
		return p.has(p.port, "port_security_enabled") && p.has(p.network, "port_security_enabled")
	},
	"port-security-groups-filtering": func(p probe) bool {
		sg := path(p.port, "security_groups", 0).(string)
		return p.list("/ports?security_groups="+sg, "ports") > 0
	},
	"quotas": func(p probe) bool {
		return p.status("GET", "/quotas/"+path(p.network, "project_id").(string), nil) == http.StatusOK &&
			p.status("GET", "/quotas", nil) == http.StatusForbidden
	},
	"quota_details": func(p probe) bool {
		return p.status("GET", "/quotas/"+path(p.network, "project_id").(string)+"/details", nil) == http.StatusOK
	},
	"revision-if-match": func(p probe) bool {
		return p.status("PUT", "/ports/"+p.id(p.port), map[string]any{"port": map[string]any{"name": "x"}},
			"If-Match", "revision_number=999") == http.StatusPreconditionFailed
	},
	"router":                    func(p probe) bool { return p.list("/routers", "routers") > 0 },
	"security-group":            func(p probe) bool { return p.list("/security-groups", "security_groups") > 0 },
	"standard-attr-description": func(p probe) bool { return p.has(p.network, "description") },
	"standard-attr-revisions":   func(p probe) bool { return p.has(p.network, "revision_number") },
	"standard-attr-tag": func(p probe) bool {
		return p.has(p.network, "tags") && p.status("PUT", "/networks/"+p.id(p.network)+"/tags/probe", nil) == http.StatusCreated &&
			p.list("/networks?tags=probe", "networks") == 1
	},
	"standard-attr-timestamp": func(p probe) bool {
		return p.has(p.network, "created_at") && p.has(p.network, "updated_at") &&
			p.list("/networks?changed_since=2000-01-01T00:00:00Z", "networks") > 0 && p.list("/networks?changed_since=2999-01-01T00:00:00Z", "networks") == 0
	},
}

// probe is what an extension probe works with: a client, the Neutron
// base URL and a port, network and router to look at.
type probe struct {
	c                     rawClient
	base                  string
	port, network, router any
}

func (p probe) status(method, rel string, body any, header ...string) int {
	status, _ := p.c.do(method, p.base+rel, body, header...)
	return status
}

func (p probe) list(rel, key string) int {
	status, body := p.c.do("GET", p.base+rel, nil)
	items, _ := path(body, key).([]any)
	if status != http.StatusOK {
		return -1
	}
	return len(items)
}

func (p probe) has(obj any, attr string) bool { _, ok := obj.(map[string]any)[attr]; return ok }

func (p probe) id(obj any) string { return path(obj, "id").(string) }

func walkExtensions(t *testing.T, c rawClient, s *Server, base string) {
	t.Helper()
	first := func(rel, key string) any {
		_, body := c.do("GET", base+rel, nil)
		return path(body, key, 0)
	}
	p := probe{c: c, base: base, router: first("/routers", "routers"), network: first("/networks", "networks")}
	p.port = first("/ports?device_id="+s.Servers()[0].ID, "ports")
	_, body := c.do("GET", base+"/extensions", nil)
	exts, _ := path(body, "extensions").([]any)
	if len(exts) == 0 {
		t.Fatalf("no extensions: %v", body)
	}
	for _, e := range exts {
		alias := path(e, "alias").(string)
		if status, _ := c.do("GET", base+"/extensions/"+alias, nil); status != http.StatusOK {
			t.Errorf("extension %s: GET /extensions/%s = %d", alias, alias, status)
		}
		probe, ok := extensionProbes[alias]
		switch {
		case !ok:
			t.Errorf("extension %s is advertised but nothing checks that it is served", alias)
		case !probe(p):
			t.Errorf("extension %s is advertised but what it adds is not served", alias)
		}
	}
}

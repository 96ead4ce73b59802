package ranchersim

import (
	"encoding/json"
	"net/http"
	"slices"
	"testing"

	rancher "github.com/rancher/go-rancher/v2"
)

func TestClientConstruction(t *testing.T) {
	s := NewServer(t, Options{})
	for _, url := range []string{s.ProjectURL(s.URL()), s.URL(), s.URL() + "/v2-beta"} {
		c := connectAs(t, url, DefaultAccessKey, DefaultSecretKey)
		for _, typ := range []string{"host", "stack", "setting", "ipAddress", "loadBalancerService", "externalService", "service"} {
			if _, ok := c.GetTypes()[typ]; !ok {
				t.Errorf("%s: schema %s missing", url, typ)
			}
		}
		if _, err := c.Machine.List(nil); err == nil || err.Error() != "Unknown schema type [machine]" {
			t.Errorf("an unserved type: err = %v", err)
		}
	}
}

func TestAuth(t *testing.T) {
	s := NewServer(t, Options{})
	_, err := rancher.NewRancherClient(&rancher.ClientOpts{Url: s.ProjectURL(s.URL()), AccessKey: DefaultAccessKey, SecretKey: "wrong"})
	wantAPIError(t, err, http.StatusUnauthorized, "code=Unauthorized", "message=Unauthorized")

	s.AddAPIKey("second", "second-secret")
	c := connectAs(t, s.ProjectURL(s.URL()), "second", "second-secret")
	s.RevokeAPIKey("second")
	_, err = c.Host.List(nil)
	wantAPIError(t, err, http.StatusUnauthorized)
	if _, err := connect(t, s).Host.List(nil); err != nil {
		t.Errorf("the first key after revoking the second: %v", err)
	}

	resp, err := http.Get(s.ProjectURL(s.URL()) + "/hosts")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || resp.StatusCode != http.StatusUnauthorized ||
		body["type"] != "error" || body["code"] != "Unauthorized" || body["status"] != float64(401) {
		t.Errorf("no credentials: %s %v %v", resp.Status, body, err)
	}
	if resp.Header.Get("WWW-Authenticate") == "" {
		t.Error("401 without a challenge")
	}
}

func TestHosts(t *testing.T) {
	s, c := setup(t, Options{ProvisioningReads: -1})
	a := s.AddHost(Host{Hostname: "node-a", Labels: map[string]string{"zone": "z1"}})
	b := s.AddHost(Host{Hostname: "node-b", State: StateInactive})
	gone := s.AddHost(Host{Hostname: "node-c"})
	s.RemoveHost(gone.ID)

	all, err := c.Host.List(filters("removed_null", "1"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, h := range all.Data {
		names = append(names, h.Hostname+"/"+h.State)
	}
	if want := []string{"node-a/active", "node-b/inactive"}; !slices.Equal(names, want) {
		t.Errorf("hosts = %v, want %v", names, want)
	}
	if h := all.Data[0]; h.Uuid != a.UUID || h.AgentIpAddress != a.AgentIPAddress || h.Labels["zone"] != "z1" ||
		!slices.Contains(mapsKeys(h.Actions), "deactivate") {
		t.Errorf("host a = %+v", h)
	}

	var ips rancher.IpAddressCollection
	if err := c.GetLink(all.Data[0].Resource, "ipAddresses", &ips); err != nil {
		t.Fatal(err)
	}
	if len(ips.Data) != 2 || ips.Data[0].Address != a.AgentIPAddress || ips.Data[1].Address != a.IPAddresses[1].Address {
		t.Errorf("ipAddresses = %+v, want %+v", ips.Data, a.IPAddresses)
	}

	// Removed hosts show without removed_null, until purged.
	if h, err := c.Host.ById(gone.ID); err != nil || h == nil || h.State != StateRemoved || h.Removed == "" {
		t.Errorf("removed host = %+v, %v", h, err)
	}
	s.Advance()
	if h, err := c.Host.ById(gone.ID); err != nil || h != nil {
		t.Errorf("purged host = %+v, %v; want (nil, nil)", h, err)
	}

	// Deactivate an active host through its action; then remove it.
	got, err := c.Host.ById(a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Host.ActionRemove(got); err == nil {
		t.Error("remove of an active host: no error (the action is not offered)")
	}
	if _, err := c.Host.ActionDeactivate(got); err != nil {
		t.Fatal(err)
	}
	if h, _ := s.Host(a.ID); h.State != StateInactive {
		t.Errorf("after deactivate: %s", h.State)
	}
	if err := c.Host.Delete(got); err != nil {
		t.Fatal(err)
	}
	if h, _ := s.Host(a.ID); h.State != StateRemoved || h.Removed == nil {
		t.Errorf("after delete: %+v", h)
	}
	if _, ok := s.Host(b.ID); !ok {
		t.Error("b vanished")
	}
}

func mapsKeys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestHostTransitions(t *testing.T) {
	s, c := setup(t, Options{ProvisioningReads: 2})
	h := s.AddHost(Host{})
	got, _ := c.Host.ById(h.ID)
	if _, err := c.Host.ActionDeactivate(got); err != nil {
		t.Fatal(err)
	}
	first, _ := c.Host.ById(h.ID)
	second, _ := c.Host.ById(h.ID)
	if first.State != StateDeactivating || first.Transitioning != "yes" || second.State != StateInactive || second.Transitioning != "no" {
		t.Errorf("reads: %s/%s then %s/%s", first.State, first.Transitioning, second.State, second.Transitioning)
	}
}

func TestSettings(t *testing.T) {
	_, c := setup(t, Options{})
	got, err := c.Setting.List(filters("name", SettingLBImage))
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Data) != 1 || got.Data[0].Value != DefaultLBImage {
		t.Errorf("settings = %+v", got.Data)
	}
}

func TestStacks(t *testing.T) {
	s, c := setup(t, Options{ProvisioningReads: -1})
	k, err := c.Stack.Create(&rancher.Stack{Name: "kubernetes-loadbalancers", ExternalId: "kubernetes-loadbalancers://"})
	if err != nil {
		t.Fatal(err)
	}
	if k.State != StateActive || k.Id == "" {
		t.Errorf("created %+v", k)
	}
	_, err = c.Stack.Create(&rancher.Stack{Name: "kubernetes-loadbalancers"})
	wantAPIError(t, err, http.StatusUnprocessableEntity, "code=NotUnique", "fieldName=name")
	_, err = c.Stack.Create(&rancher.Stack{})
	wantAPIError(t, err, http.StatusUnprocessableEntity, "code=MissingRequired", "fieldName=name")
	_, err = c.Stack.Create(&rancher.Stack{Name: "no_underscores"})
	wantAPIError(t, err, http.StatusUnprocessableEntity, "code=InvalidCharacters")

	s.AddStack(Stack{Name: "other"})
	for _, f := range []*rancher.ListOpts{
		filters("name", "kubernetes-loadbalancers", "removed_null", "1", "external_id", "nope"),
		filters("externalId", "kubernetes-loadbalancers://"),
		filters("name_prefix", "kube"),
		filters("name_ne", "other"),
		filters("name_like", "kubernetes-%"),
	} {
		got, err := c.Stack.List(f)
		if err != nil || len(got.Data) != 1 || got.Data[0].Id != k.Id {
			t.Errorf("List(%v) = %+v, %v", f.Filters, got, err)
		}
	}
	// Cattle splits external_id into the field external and the modifier
	// id: no filter, ignored (filters_test.go).
	got, _ := c.Stack.List(filters("external_id", "nope", "unknownKey", "x"))
	if len(got.Data) != 2 {
		t.Errorf("external_id=nope, unknownKey=x: %d stacks, want both: the keys filter nothing", len(got.Data))
	}

	if err := c.Stack.Delete(k); err != nil {
		t.Fatal(err)
	}
	if got, _ := c.Stack.List(filters("name", k.Name, "removed_null", "1")); len(got.Data) != 0 {
		t.Errorf("removed stack listed with removed_null: %+v", got.Data)
	}
	if _, err := c.Stack.Create(&rancher.Stack{Name: k.Name}); err != nil {
		t.Errorf("re-creating a removed stack's name: %v", err)
	}
}

func TestPagination(t *testing.T) {
	s, c := setup(t, Options{})
	for range 7 {
		s.AddHost(Host{})
	}
	page, err := c.Host.List(filters("limit", 3))
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	pages := 0
	for page != nil {
		pages++
		for _, h := range page.Data {
			ids = append(ids, h.Id)
		}
		if page, err = page.Next(); err != nil {
			t.Fatal(err)
		}
	}
	if pages != 3 || len(ids) != 7 || ids[0] != "1h1" || ids[6] != "1h7" {
		t.Errorf("pages = %d, ids = %v", pages, ids)
	}
}

func TestNotFound(t *testing.T) {
	_, c := setup(t, Options{})
	h, err := c.Host.ById("1h999")
	if h != nil || err != nil {
		t.Errorf("ById of an unknown host = %v, %v; want go-rancher's (nil, nil)", h, err)
	}
	var out map[string]any
	err = c.GetLink(rancher.Resource{Links: map[string]string{"x": c.GetOpts().Url + "/stacks/1st99"}}, "x", &out)
	wantAPIError(t, err, http.StatusNotFound, "code=Not Found", "message=Not Found")
}

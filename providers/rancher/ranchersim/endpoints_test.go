package ranchersim

import (
	"fmt"
	"slices"
	"testing"

	rancher "github.com/rancher/go-rancher/v2"
)

// TestHostPublicEndpoints: a host lists the public endpoints of the load
// balancers running on it, in the order of the services, the same in a
// host list (which indexes them once for all its hosts) and a host read
// alone; a host no load balancer runs on lists none ([], not null).
func TestHostPublicEndpoints(t *testing.T) {
	s, c := setup(t, Options{})
	var hosts []Host
	for i := range 4 {
		hosts = append(hosts, s.AddHost(Host{Hostname: fmt.Sprintf("node-%d", i)}))
	}
	k := s.AddStack(Stack{Name: "lbs", ExternalID: "lbs://", State: StateActive})
	global := s.AddService(Service{Name: "global", StackID: k.ID, LaunchConfig: &LaunchConfig{
		Ports: []string{"80:80/tcp", "53:53/udp"}, Labels: map[string]string{LabelGlobal: "true"},
	}})
	two := s.AddService(Service{Name: "two", StackID: k.ID, Scale: 2, LaunchConfig: &LaunchConfig{Ports: []string{"443:443/tcp"}}})
	s.AddService(Service{Name: "stopped", StackID: k.ID, State: StateInactive, LaunchConfig: &LaunchConfig{Ports: []string{"8080:8080/tcp"}}})

	want := func(h Host) []string {
		eps := []string{global.ID + ":80", global.ID + ":53"}
		if slices.Contains([]string{hosts[0].ID, hosts[1].ID}, h.ID) {
			eps = append(eps, two.ID+":443")
		}
		return eps
	}
	got := func(h rancher.Host) []string {
		out := []string{}
		for _, e := range h.PublicEndpoints {
			if e.HostId != h.Id || e.IpAddress != h.AgentIpAddress {
				t.Errorf("host %s lists endpoint %+v of another host", h.Id, e)
			}
			out = append(out, fmt.Sprintf("%s:%d", e.ServiceId, e.Port))
		}
		return out
	}
	list, err := c.Host.List(filters("limit", 3))
	if err != nil {
		t.Fatal(err)
	}
	listed := list.Data
	for next := list; next.Pagination != nil && next.Pagination.Next != ""; {
		if next, err = next.Next(); err != nil {
			t.Fatal(err)
		}
		listed = append(listed, next.Data...)
	}
	if len(listed) != len(hosts) {
		t.Fatalf("listed %d hosts, want %d", len(listed), len(hosts))
	}
	for i, h := range listed {
		if !slices.Equal(got(h), want(hosts[i])) {
			t.Errorf("listed host %s: endpoints %v, want %v", h.Id, got(h), want(hosts[i]))
		}
		alone, err := c.Host.ById(h.Id)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got(*alone), want(hosts[i])) {
			t.Errorf("host %s read alone: endpoints %v, want %v", h.Id, got(*alone), want(hosts[i]))
		}
	}

	none := s.AddHost(Host{Hostname: "idle", State: StateInactive})
	raw := call(t, s, "GET", "/hosts/"+none.ID, "")
	if eps, ok := raw.body["publicEndpoints"].([]any); !ok || len(eps) != 0 {
		t.Errorf("an inactive host's publicEndpoints = %#v, want []", raw.body["publicEndpoints"])
	}
}

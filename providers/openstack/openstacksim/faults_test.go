package openstacksim

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/loadbalancers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
)

const opServersDetail = "GET /compute/v2.1/servers/detail"

func TestRateLimitRetryAfter(t *testing.T) {
	s, c := setup(t, Options{})
	s.Inject(Fault{Op: opServersDetail, Status: http.StatusTooManyRequests, RetryAfter: 2 * time.Second, Count: 2})
	var seen []string
	c.provider.RetryBackoffFunc = func(_ context.Context, e *gophercloud.ErrUnexpectedResponseCode, _ error, _ uint) error {
		seen = append(seen, e.ResponseHeader.Get("Retry-After"))
		return nil // retry at once
	}
	if _, err := servers.List(c.compute, nil).AllPages(ctx()); err != nil {
		t.Fatalf("after two 429s: %v", err)
	}
	if len(seen) != 2 || seen[0] != "2" {
		t.Errorf("Retry-After seen = %v", seen)
	}
	// Without a backoff function the 429 surfaces, with Nova's body.
	c.provider.RetryBackoffFunc = nil
	remove := s.RateLimit(0, opServersDetail)
	_, err := servers.List(c.compute, nil).AllPages(ctx())
	wantCode(t, err, http.StatusTooManyRequests)
	remove()
	if _, err := servers.List(c.compute, nil).AllPages(ctx()); err != nil {
		t.Fatal(err)
	}
}

func TestFaultsPerOperationAndService(t *testing.T) {
	s, c := setup(t, Options{})
	v := s.AddServer(NovaServer{Name: "a"})
	remove := s.Fail(http.StatusInternalServerError, "GET /network/v2.0/ports")
	_, err := ports.List(c.network, ports.ListOpts{DeviceID: v.ID}).AllPages(ctx())
	wantNeutronError(t, err, http.StatusInternalServerError, "HTTPInternalServerError")
	if _, err := servers.Get(ctx(), c.compute, v.ID).Extract(); err != nil {
		t.Errorf("other operations must work: %v", err)
	}
	remove()

	// A prefix for a whole service, with that service's error body.
	remove = s.Fail(http.StatusNotFound, "* /load-balancer/v2.0/*")
	_, err = loadbalancers.Get(ctx(), c.lb, "x").Extract()
	wantCode(t, err, http.StatusNotFound)
	var e gophercloud.ErrUnexpectedResponseCode
	_ = errors.As(err, &e)
	var body map[string]any
	if json.Unmarshal(e.Body, &body) != nil || body["faultcode"] != "Client" {
		t.Errorf("Octavia fault body = %s", e.Body)
	}
	remove()

	s.ResetConnections(opServersDetail)
	if _, err := servers.List(c.compute, nil).AllPages(ctx()); err == nil {
		t.Error("reset connection: no error")
	}
	s.ClearFaults()

	s.SetLatency(20 * time.Millisecond)
	start := time.Now()
	if _, err := servers.Get(ctx(), c.compute, v.ID).Extract(); err != nil {
		t.Fatal(err)
	}
	if time.Since(start) < 20*time.Millisecond || s.InjectedLatency() < 20*time.Millisecond {
		t.Errorf("latency not applied")
	}
}

func TestStatsWritesAndSimEndpoints(t *testing.T) {
	s, c := setup(t, Options{})
	before := s.Writes()
	v := s.AddServer(NovaServer{Name: "a"})
	pairs := []ports.AddressPair{{IPAddress: "10.244.0.0/24"}}
	if _, err := ports.Update(ctx(), c.network, v.Ports[0].ID, ports.UpdateOpts{AllowedAddressPairs: &pairs}).Extract(); err != nil {
		t.Fatal(err)
	}
	_, _ = ports.Update(ctx(), c.network, "missing", ports.UpdateOpts{AllowedAddressPairs: &pairs}).Extract()
	if got := s.Writes() - before; got != 1 {
		t.Errorf("writes = %d, want 1 (token requests and failures do not count)", got)
	}
	if got := s.Stats()["PUT /network/v2.0/ports/{id}"]; got != 2 {
		t.Errorf("stats = %d", got)
	}
	log := s.Requests()
	if last := log[len(log)-1]; last.Status != http.StatusNotFound || last.Op != "PUT /network/v2.0/ports/{id}" {
		t.Errorf("last request = %+v", last)
	}

	var stats struct {
		Writes     int
		Operations map[string]int
	}
	getJSON(t, s.URL()+"/_sim/stats", &stats)
	if stats.Writes != s.Writes() || stats.Operations["POST /identity/v3/auth/tokens"] != 1 {
		t.Errorf("/_sim/stats = %+v", stats)
	}
	var snap Snapshot
	getJSON(t, s.URL()+"/_sim/state", &snap)
	if len(snap.Servers) != 1 || snap.Defaults.RouterID == "" {
		t.Errorf("/_sim/state = %+v", snap)
	}
	resp, err := http.Get(s.URL() + "/_sim/cloud.conf")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("/_sim/cloud.conf: %d", resp.StatusCode)
	}
}

func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.Header.Get("Content-Type") != "application/json" {
		t.Errorf("%s: Content-Type %q", url, resp.Header.Get("Content-Type"))
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatal(err)
	}
}

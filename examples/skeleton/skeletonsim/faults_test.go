package skeletonsim_test

import (
	"errors"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ccmkit/ccmkit/examples/skeleton/skeletonsim"
	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

func TestFaults(t *testing.T) {
	tests := []struct {
		name       string
		inject     func(*skeletonsim.Server) func()
		path       string
		wantStatus int
		wantCode   string
		wantHeader http.Header
	}{
		{
			name:       "every endpoint",
			inject:     func(s *skeletonsim.Server) func() { return s.Fail(500) },
			path:       "/v1/instances",
			wantStatus: 500,
			wantCode:   "internal_error",
		},
		{
			name:       "one endpoint, matching",
			inject:     func(s *skeletonsim.Server) func() { return s.Fail(404, "GET /v1/instances") },
			path:       "/v1/instances",
			wantStatus: 404,
			wantCode:   "not_found",
		},
		{
			name:       "one endpoint, other endpoint untouched",
			inject:     func(s *skeletonsim.Server) func() { return s.Fail(404, "GET /v1/routes") },
			path:       "/v1/instances",
			wantStatus: 200,
		},
		{
			name:       "rate limit",
			inject:     func(s *skeletonsim.Server) func() { return s.RateLimit(1500 * time.Millisecond) },
			path:       "/v1/routes",
			wantStatus: 429,
			wantCode:   "rate_limited",
			wantHeader: http.Header{"Retry-After": {"2"}},
		},
		{
			name:       "sim endpoints never fail",
			inject:     func(s *skeletonsim.Server) func() { return s.Fail(500) },
			path:       "/_sim/stats",
			wantStatus: 200,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sim := skeletonsim.NewServer(t, skeletonsim.Options{})
			c := newClient(t, sim)
			restore := tt.inject(sim)
			resp := c.do("GET", tt.path, nil)
			if resp.status != tt.wantStatus {
				t.Fatalf("status = %d, want %d (%s)", resp.status, tt.wantStatus, resp.body)
			}
			if tt.wantCode != "" && resp.errorCode() != tt.wantCode {
				t.Errorf("code = %q, want %q", resp.errorCode(), tt.wantCode)
			}
			for k, v := range tt.wantHeader {
				if diff := cmp.Diff(v, resp.header.Values(k)); diff != "" {
					t.Errorf("header %s (-want +got):\n%s", k, diff)
				}
			}
			restore()
			restore() // idempotent
			if resp := c.do("GET", tt.path, nil); resp.status != 200 {
				t.Errorf("after restore: status %d", resp.status)
			}
		})
	}
}

func TestFaultCount(t *testing.T) {
	sim := skeletonsim.NewServer(t, skeletonsim.Options{})
	sim.Inject(skeletonsim.Fault{Status: 503, Count: 2})
	c := newClient(t, sim)
	var got []int
	for range 3 {
		got = append(got, c.do("GET", "/v1/instances", nil).status)
	}
	if diff := cmp.Diff([]int{503, 503, 200}, got); diff != "" {
		t.Errorf("statuses (-want +got):\n%s", diff)
	}
}

func TestFaultRateIsSeeded(t *testing.T) {
	statuses := func() []int {
		sim := skeletonsim.NewServer(t, skeletonsim.Options{Common: simkit.Common{
			Seed:   42,
			Faults: []skeletonsim.Fault{{Op: "GET /v1/instances", Status: 500, Rate: 0.5}},
		}})
		c := newClient(t, sim)
		var out []int
		for range 40 {
			out = append(out, c.do("GET", "/v1/instances", nil).status)
		}
		return out
	}
	first, second := statuses(), statuses()
	if diff := cmp.Diff(first, second); diff != "" {
		t.Errorf("same seed, different failures (-first +second):\n%s", diff)
	}
	if !slices.Contains(first, 200) || !slices.Contains(first, 500) {
		t.Errorf("rate 0.5 gave %v, want a mix of 200 and 500", first)
	}
}

func TestResetConnection(t *testing.T) {
	sim := skeletonsim.NewServer(t, skeletonsim.Options{})
	sim.ResetConnections("GET /v1/instances")
	c := newClient(t, sim)
	if _, err := c.send("GET", "/v1/instances", nil); err == nil {
		t.Fatal("request succeeded, want a connection error")
	}
	if got := sim.Writes(); got != 0 {
		t.Errorf("Writes = %d, want 0", got)
	}
}

func TestLatencyOutlastsClientTimeout(t *testing.T) {
	sim := skeletonsim.NewServer(t, skeletonsim.Options{})
	sim.SetLatency(time.Minute) // the handler gives up when the client does
	c := newClient(t, sim)
	c.http.Timeout = 50 * time.Millisecond
	_, err := c.send("GET", "/v1/instances", nil)
	var netErr net.Error
	if !errors.As(err, &netErr) || !netErr.Timeout() {
		t.Fatalf("err = %v, want a client timeout", err)
	}
	sim.ClearFaults()
	c.http.Timeout = 0
	if resp := c.do("GET", "/v1/instances", nil); resp.status != 200 {
		t.Errorf("after ClearFaults: status %d", resp.status)
	}
}

// TestScenarioOperationsAreEndpoints checks that every operation a scenario
// can name is a served endpoint.
func TestScenarioOperationsAreEndpoints(t *testing.T) {
	sim := skeletonsim.NewServer(t, skeletonsim.Options{})
	c := newClient(t, sim)
	for _, op := range []string{
		"instances.list", "instances.get",
		"loadBalancers.list", "loadBalancers.create", "loadBalancers.get", "loadBalancers.update", "loadBalancers.delete",
		"routes.list", "routes.create", "routes.delete",
	} {
		sc, err := skeletonsim.LoadScenario([]byte("faults: [{operation: " + op + ", status: 418}]"))
		if err != nil {
			t.Fatalf("%s: %v", op, err)
		}
		f := sc.Options().Faults[0]
		remove := sim.Inject(f)
		method, path, _ := strings.Cut(strings.ReplaceAll(f.Op, "{id}", "x"), " ")
		if resp := c.do(method, path, nil); resp.status != 418 {
			t.Errorf("%s (%s): status %d, want the injected 418", op, f.Op, resp.status)
		}
		remove()
	}
}

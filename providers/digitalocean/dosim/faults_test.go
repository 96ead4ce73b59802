package dosim

import (
	"net/http"
	"testing"
	"time"
)

func TestRateLimitFault(t *testing.T) {
	s, c := setup(t, Options{})
	remove := s.RateLimit(2*time.Second, "GET /v2/account")
	_, _, err := c.Account.Get(ctx())
	er := errorResponse(t, err, http.StatusTooManyRequests)
	if got := er.Response.Header.Get("Retry-After"); got != "2" {
		t.Errorf("Retry-After = %q", got)
	}
	if er.Message != msgRateLimited || er.Response.Header.Get("RateLimit-Limit") == "" {
		t.Errorf("429 = %+v", er)
	}
	if _, _, err := c.Droplets.List(ctx(), nil); err != nil {
		t.Errorf("other endpoint failed: %v", err)
	}
	remove()
	if _, _, err := c.Account.Get(ctx()); err != nil {
		t.Error(err)
	}

	// godo's retrying client honours Retry-After: two 429s, then success.
	s.Inject(Fault{Status: http.StatusTooManyRequests, Count: 2})
	rc := newClient(t, s, s.Token(), 3)
	before := s.Stats()["GET /v2/account"]
	if _, _, err := rc.Account.Get(ctx()); err != nil {
		t.Fatal(err)
	}
	if got := s.Stats()["GET /v2/account"] - before; got != 3 {
		t.Errorf("attempts = %d, want 3", got)
	}
}

func TestServerErrorAndLatency(t *testing.T) {
	s, c := setup(t, Options{})
	id := s.AddDroplet(Droplet{}).ID
	remove := s.Fail(http.StatusInternalServerError)
	_, _, err := c.Droplets.Get(ctx(), id)
	er := errorResponse(t, err, 500)
	if er.RequestID == "" {
		t.Error("no request_id")
	}
	_, err = c.LoadBalancers.Delete(ctx(), "x")
	wantStatus(t, err, 500)
	if s.Writes() != 0 {
		t.Errorf("faulted write counted: %d", s.Writes())
	}
	remove()

	s.SetLatency(30 * time.Millisecond)
	start := time.Now()
	if _, _, err := c.Droplets.Get(ctx(), id); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 30*time.Millisecond {
		t.Errorf("request took %v with 30ms latency", d)
	}
	if s.InjectedLatency() != 30*time.Millisecond {
		t.Errorf("injected = %v", s.InjectedLatency())
	}
	s.ClearFaults()

	s.Inject(Fault{Op: "GET /v2/droplets/{id}", Status: 503, Count: 1})
	_, _, err = c.Droplets.Get(ctx(), id)
	if er := errorResponse(t, err, 503); er.Response.Header.Get("Retry-After") != "" || er.RequestID == "" {
		t.Errorf("503: Retry-After %q, request_id %q", er.Response.Header.Get("Retry-After"), er.RequestID)
	}
	if _, _, err := c.Droplets.Get(ctx(), id); err != nil {
		t.Errorf("Count:1 fault stayed: %v", err)
	}

	s.ResetConnections("GET /v2/account")
	if _, _, err := c.Account.Get(ctx()); err == nil {
		t.Error("reset connection gave no error")
	}
}

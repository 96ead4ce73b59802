package cloudapi

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"
)

func TestRateLimiterDelaysBursts(t *testing.T) {
	tests := []struct {
		name     string
		requests int
		qps      float64
		burst    int
		// wantWait is the limiter's own arithmetic: the first burst requests
		// pass at once, each further one waits 1/qps.
		wantWait time.Duration
	}{
		{name: "10 requests at 5 QPS, burst 2", requests: 10, qps: 5, burst: 2, wantWait: 1600 * time.Millisecond},
		{name: "burst defaults to QPS", requests: 10, qps: 10, wantWait: 0},
		{name: "fractional QPS defaults burst to 1", requests: 4, qps: 0.5, wantWait: 6 * time.Second},
		{name: "no limit", requests: 20, qps: 0, wantWait: 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := newScriptedServer(t)
			tr, clock := newFakeTimeTransport(Options{QPS: tc.qps, Burst: tc.burst})
			for range tc.requests {
				if _, _, err := do(t, tr, newRequest(t, t.Context(), http.MethodGet, srv.URL, "")); err != nil {
					t.Fatal(err)
				}
			}
			if got := len(srv.Requests()); got != tc.requests {
				t.Errorf("server saw %d requests, want %d", got, tc.requests)
			}
			// The limiter computes delays in float64 seconds; allow for rounding.
			if got := clock.TotalWait(); got < tc.wantWait-time.Millisecond || got > tc.wantWait+time.Millisecond {
				t.Errorf("waited %s in total, want %s", got, tc.wantWait)
			}
		})
	}
}

func TestRateLimiterHonoursContext(t *testing.T) {
	srv := newScriptedServer(t)
	// One token every 100s: the second request must wait for a long time.
	newLimited := func(t *testing.T) http.RoundTripper {
		rt := NewTransport(Options{QPS: 0.01, Burst: 1})
		if _, _, err := do(t, rt, newRequest(t, t.Context(), http.MethodGet, srv.URL, "")); err != nil {
			t.Fatal(err)
		}
		return rt
	}

	t.Run("cancelled while waiting", func(t *testing.T) {
		rt := newLimited(t)
		ctx, cancel := context.WithCancel(t.Context())
		time.AfterFunc(50*time.Millisecond, cancel)
		start := time.Now()
		_, _, err := do(t, rt, newRequest(t, ctx, http.MethodGet, srv.URL, ""))
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", err)
		}
		if elapsed := time.Since(start); elapsed > 5*time.Second {
			t.Errorf("returned %s after cancellation", elapsed)
		}
	})
	t.Run("deadline too close to wait for a token", func(t *testing.T) {
		rt := newLimited(t)
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		start := time.Now()
		_, _, err := do(t, rt, newRequest(t, ctx, http.MethodGet, srv.URL, ""))
		if err == nil {
			t.Error("want an error when the wait would exceed the deadline")
		}
		if elapsed := time.Since(start); elapsed > 5*time.Second {
			t.Errorf("waited %s instead of failing at once", elapsed)
		}
	})
}

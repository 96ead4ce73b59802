package cloudapi

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// A hung API: every attempt times out. The budget ends the request,
// cutting the last attempt short, however many retries are allowed.
func TestBudgetBoundsAHungRequest(t *testing.T) {
	var attempts atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		attempts.Add(1)
		<-r.Context().Done() // never answers
	}))
	defer srv.Close()
	tr := newTransport(Options{Timeout: 300 * time.Millisecond, Budget: 700 * time.Millisecond, MaxRetries: 10, MinBackoff: time.Millisecond})

	start := time.Now()
	err := roundTripErr(tr, newRequest(t, t.Context(), http.MethodGet, srv.URL, ""))
	elapsed := time.Since(start)

	if !errors.Is(err, ErrBudgetSpent) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want one wrapping ErrBudgetSpent and context.DeadlineExceeded", err)
	}
	if elapsed < 690*time.Millisecond || elapsed > 1500*time.Millisecond {
		t.Errorf("the request took %s; want about its 700ms budget", elapsed)
	}
	if n := attempts.Load(); n != 3 {
		t.Errorf("%d attempts, want 3 (300ms, 300ms, and the budget's last 100ms)", n)
	}
}

// No wait starts that would end past the budget: with Retry-After 30s and
// a 45s budget there is one retry, and the caller gets the last answer.
func TestBudgetStopsRetriesWhoseWaitWouldOverrunIt(t *testing.T) {
	for _, tc := range []struct {
		name      string
		budget    time.Duration
		wantReqs  int
		wantWaits []time.Duration
	}{
		{"bounded", 45 * time.Second, 2, []time.Duration{30 * time.Second}},
		{"negative: only MaxRetries bounds", -1, 4, []time.Duration{30 * time.Second, 30 * time.Second, 30 * time.Second}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newScriptedServer(t, reply{status: http.StatusTooManyRequests, header: map[string]string{"Retry-After": "30"}})
			tr, clock := newFakeTimeTransport(Options{MaxRetries: 3, MaxBackoff: time.Minute, Budget: tc.budget})
			resp, _, err := do(t, tr, newRequest(t, t.Context(), http.MethodGet, srv.URL, ""))
			if err != nil || resp.StatusCode != http.StatusTooManyRequests {
				t.Fatalf("got %v, %v; want the last 429 and no error", resp, err)
			}
			if got := len(srv.Requests()); got != tc.wantReqs {
				t.Errorf("%d requests, want %d", got, tc.wantReqs)
			}
			if got := clock.Waits(); len(got) != len(tc.wantWaits) {
				t.Errorf("waits = %v, want %v", got, tc.wantWaits)
			}
		})
	}
}

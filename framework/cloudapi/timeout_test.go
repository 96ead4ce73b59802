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

func TestContextCancelledDuringBackoff(t *testing.T) {
	srv := newScriptedServer(t, reply{status: http.StatusTooManyRequests, header: map[string]string{"Retry-After": "30"}})
	ctx, cancel := context.WithCancel(t.Context())
	// The real sleep, cancelled once it has begun: the point is that a 30s
	// wait really ends early.
	tr := newTransport(Options{MaxBackoff: time.Minute})
	var requested time.Duration
	tr.sleep = func(ctx context.Context, d time.Duration) error {
		requested = d
		time.AfterFunc(20*time.Millisecond, cancel)
		return sleepContext(ctx, d)
	}

	start := time.Now()
	_, _, err := do(t, tr, newRequest(t, ctx, http.MethodGet, srv.URL, ""))
	elapsed := time.Since(start)

	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	if requested != 30*time.Second {
		t.Errorf("backoff wait = %s, want the 30s Retry-After", requested)
	}
	if elapsed > 5*time.Second {
		t.Errorf("RoundTrip took %s after cancellation during a 30s backoff", elapsed)
	}
	if got := len(srv.Requests()); got != 1 {
		t.Errorf("server saw %d requests, want 1", got)
	}
}

func TestPerAttemptTimeout(t *testing.T) {
	var attempts atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body) // lets the server notice the client hanging up
		if attempts.Add(1) == 1 {
			select { // hang until the client gives up on this attempt
			case <-r.Context().Done():
			case <-time.After(10 * time.Second):
			}
			return
		}
		_, _ = w.Write([]byte("ok"))
	}))
	defer srv.Close()

	t.Run("GET retried after a timed out attempt", func(t *testing.T) {
		attempts.Store(0)
		tr, clock := newFakeTimeTransport(Options{Timeout: 500 * time.Millisecond})
		resp, body, err := do(t, tr, newRequest(t, t.Context(), http.MethodGet, srv.URL, ""))
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusOK || body != "ok" || attempts.Load() != 2 || len(clock.Waits()) != 1 {
			t.Errorf("got %d %q after %d attempts and %d waits, want 200 \"ok\" after 2 attempts and 1 wait",
				resp.StatusCode, body, attempts.Load(), len(clock.Waits()))
		}
	})
	t.Run("POST not retried and reports the timeout", func(t *testing.T) {
		attempts.Store(0)
		tr, _ := newFakeTimeTransport(Options{Timeout: 500 * time.Millisecond})
		_, _, err := do(t, tr, newRequest(t, t.Context(), http.MethodPost, srv.URL, "{}"))
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("err = %v, want one wrapping context.DeadlineExceeded", err)
		}
		var timeout interface{ Timeout() bool }
		if !errors.As(err, &timeout) || !timeout.Timeout() {
			t.Errorf("err = %v, want a Timeout() error", err)
		}
		if got := attempts.Load(); got != 1 {
			t.Errorf("server saw %d attempts, want 1", got)
		}
	})
}

func TestResponseBodyReadableAfterRoundTrip(t *testing.T) {
	const size = 256 << 10
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		http.NewResponseController(w).Flush()
		time.Sleep(50 * time.Millisecond) // the body arrives after RoundTrip has returned
		_, _ = w.Write(make([]byte, size))
	}))
	defer srv.Close()

	resp, body, err := do(t, NewTransport(Options{Timeout: 10 * time.Second}), newRequest(t, t.Context(), http.MethodGet, srv.URL, ""))
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || len(body) != size {
		t.Errorf("got %d with %d body bytes, want 200 with %d", resp.StatusCode, len(body), size)
	}
}

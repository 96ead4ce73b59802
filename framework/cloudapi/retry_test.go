package cloudapi

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestRetryAfterIsHonoured(t *testing.T) {
	clockStart := newFakeClock().Now()
	tests := []struct {
		name       string
		retryAfter string
		maxBackoff time.Duration
		wantWait   time.Duration
	}{
		{name: "delta seconds", retryAfter: "1", maxBackoff: 10 * time.Second, wantWait: time.Second},
		{name: "delta seconds capped by MaxBackoff", retryAfter: "120", maxBackoff: 5 * time.Second, wantWait: 5 * time.Second},
		{name: "HTTP date", retryAfter: clockStart.Add(3 * time.Second).Format(http.TimeFormat), maxBackoff: 10 * time.Second, wantWait: 3 * time.Second},
		{name: "HTTP date in the past", retryAfter: clockStart.Add(-time.Hour).Format(http.TimeFormat), maxBackoff: 10 * time.Second, wantWait: 0},
		{name: "zero", retryAfter: "0", maxBackoff: 10 * time.Second, wantWait: 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := newScriptedServer(t,
				reply{status: http.StatusTooManyRequests, header: map[string]string{"Retry-After": tc.retryAfter}, body: "slow down"},
				reply{status: http.StatusOK, body: "ok"},
			)
			tr, clock := newFakeTimeTransport(Options{Provider: "test", MaxBackoff: tc.maxBackoff})

			resp, body, err := do(t, tr, newRequest(t, t.Context(), http.MethodGet, srv.URL+"/v2/droplets", ""))
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != http.StatusOK || body != "ok" {
				t.Errorf("got %d %q, want 200 \"ok\"", resp.StatusCode, body)
			}
			if got := len(srv.Requests()); got != 2 {
				t.Errorf("server saw %d requests, want 2", got)
			}
			if diff := cmp.Diff([]time.Duration{tc.wantWait}, clock.Waits()); diff != "" {
				t.Errorf("waits (-want +got):\n%s", diff)
			}
		})
	}
}

func TestGivesUpAfterMaxRetries(t *testing.T) {
	tests := []struct {
		name         string
		status       int
		maxRetries   int
		wantAttempts int
		wantWaits    []time.Duration
	}{
		{name: "429 with 3 retries", status: http.StatusTooManyRequests, maxRetries: 3, wantAttempts: 4,
			wantWaits: []time.Duration{10 * time.Millisecond, 20 * time.Millisecond, 40 * time.Millisecond}},
		{name: "503 with default retries", status: http.StatusServiceUnavailable, maxRetries: 0, wantAttempts: 6,
			wantWaits: []time.Duration{10 * time.Millisecond, 20 * time.Millisecond, 40 * time.Millisecond, 50 * time.Millisecond, 50 * time.Millisecond}},
		{name: "retries disabled", status: http.StatusTooManyRequests, maxRetries: -1, wantAttempts: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var attempts atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				n := attempts.Add(1)
				w.WriteHeader(tc.status)
				_, _ = w.Write([]byte("attempt " + strconv.Itoa(int(n))))
			}))
			defer srv.Close()
			tr, clock := newFakeTimeTransport(Options{
				MaxRetries: tc.maxRetries,
				MinBackoff: 10 * time.Millisecond,
				MaxBackoff: 50 * time.Millisecond,
			})

			resp, body, err := do(t, tr, newRequest(t, t.Context(), http.MethodGet, srv.URL, ""))
			if err != nil {
				t.Fatalf("want the last response, got error %v", err)
			}
			if got := int(attempts.Load()); got != tc.wantAttempts {
				t.Errorf("server saw %d attempts, want %d", got, tc.wantAttempts)
			}
			wantBody := "attempt " + strconv.Itoa(tc.wantAttempts)
			if resp.StatusCode != tc.status || body != wantBody {
				t.Errorf("got %d %q, want %d %q", resp.StatusCode, body, tc.status, wantBody)
			}
			if diff := cmp.Diff(tc.wantWaits, clock.Waits()); diff != "" {
				t.Errorf("exponential backoff waits (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRetryPolicyByMethod(t *testing.T) {
	const payload = `{"name":"lb-1","size":"small"}`
	tests := []struct {
		name         string
		method       string
		header       map[string]string
		markCtx      bool
		first        reply
		wantAttempts int
	}{
		{name: "POST not retried on 500", method: http.MethodPost, first: reply{status: 500}, wantAttempts: 1},
		{name: "POST not retried on 502", method: http.MethodPost, first: reply{status: 502}, wantAttempts: 1},
		{name: "POST not retried on 504", method: http.MethodPost, first: reply{status: 504}, wantAttempts: 1},
		{name: "POST not retried on 503 without Retry-After", method: http.MethodPost, first: reply{status: 503}, wantAttempts: 1},
		{name: "POST retried on 503 with Retry-After", method: http.MethodPost, first: reply{status: 503, header: map[string]string{"Retry-After": "0"}}, wantAttempts: 2},
		{name: "POST retried on 429", method: http.MethodPost, first: reply{status: 429}, wantAttempts: 2},
		{name: "PATCH not retried on 500", method: http.MethodPatch, first: reply{status: 500}, wantAttempts: 1},
		{name: "PATCH with Idempotency-Key retried on 500", method: http.MethodPatch, header: map[string]string{"Idempotency-Key": "k1"}, first: reply{status: 500}, wantAttempts: 2},
		{name: "POST with X-Idempotency-Key retried on 502", method: http.MethodPost, header: map[string]string{"X-Idempotency-Key": "k1"}, first: reply{status: 502}, wantAttempts: 2},
		{name: "POST marked idempotent retried on 504", method: http.MethodPost, markCtx: true, first: reply{status: 504}, wantAttempts: 2},
		{name: "PUT retried on 500", method: http.MethodPut, first: reply{status: 500}, wantAttempts: 2},
		{name: "DELETE retried on 503", method: http.MethodDelete, first: reply{status: 503}, wantAttempts: 2},
		{name: "GET not retried on 404", method: http.MethodGet, first: reply{status: 404}, wantAttempts: 1},
		{name: "GET not retried on 501", method: http.MethodGet, first: reply{status: 501}, wantAttempts: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := newScriptedServer(t, tc.first, reply{status: http.StatusOK, body: "done"})
			tr, _ := newFakeTimeTransport(Options{})
			ctx := t.Context()
			if tc.markCtx {
				ctx = MarkIdempotent(ctx)
			}
			req := newRequest(t, ctx, tc.method, srv.URL+"/v2/load_balancers", payload)
			for k, v := range tc.header {
				req.Header.Set(k, v)
			}

			resp, _, err := do(t, tr, req)
			if err != nil {
				t.Fatal(err)
			}
			wantStatus := http.StatusOK
			if tc.wantAttempts == 1 {
				wantStatus = tc.first.status
			}
			if resp.StatusCode != wantStatus {
				t.Errorf("status = %d, want %d", resp.StatusCode, wantStatus)
			}
			var bodies []string
			for _, r := range srv.Requests() {
				bodies = append(bodies, r.Body)
			}
			want := make([]string, tc.wantAttempts)
			for i := range want {
				want[i] = payload
			}
			if diff := cmp.Diff(want, bodies); diff != "" {
				t.Errorf("bodies received per attempt (-want +got):\n%s", diff)
			}
		})
	}
}

// resettingServer accepts connections and closes them without answering,
// counting them.
func resettingServer(t *testing.T) (string, *atomic.Int32) {
	t.Helper()
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		conn, _, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Errorf("hijack: %v", err)
			return
		}
		if tcp, ok := conn.(*net.TCPConn); ok {
			_ = tcp.SetLinger(0) // reset rather than close cleanly
		}
		conn.Close()
	}))
	t.Cleanup(srv.Close)
	return srv.URL, &hits
}

func TestNetworkErrorsRetriedOnlyWhenIdempotent(t *testing.T) {
	tests := []struct {
		name         string
		method       string
		markCtx      bool
		wantAttempts int32
	}{
		{name: "GET", method: http.MethodGet, wantAttempts: 3},
		{name: "DELETE", method: http.MethodDelete, wantAttempts: 3},
		{name: "POST", method: http.MethodPost, wantAttempts: 1},
		{name: "POST marked idempotent", method: http.MethodPost, markCtx: true, wantAttempts: 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			url, hits := resettingServer(t)
			tr, _ := newFakeTimeTransport(Options{MaxRetries: 2})
			ctx := t.Context()
			if tc.markCtx {
				ctx = MarkIdempotent(ctx)
			}
			_, _, err := do(t, tr, newRequest(t, ctx, tc.method, url, "{}"))
			if err == nil {
				t.Fatal("want an error from a server that resets connections")
			}
			if got := hits.Load(); got != tc.wantAttempts {
				t.Errorf("server saw %d attempts, want %d", got, tc.wantAttempts)
			}
		})
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		in     string
		want   time.Duration
		wantOK bool
	}{
		{in: "", wantOK: false},
		{in: "5", want: 5 * time.Second, wantOK: true},
		{in: " 7 ", want: 7 * time.Second, wantOK: true},
		{in: "-1", wantOK: false},
		{in: "1.5", wantOK: false},
		{in: "soon", wantOK: false},
		{in: "99999999999999999", want: 24 * time.Hour, wantOK: true},
		{in: now.Add(90 * time.Second).Format(http.TimeFormat), want: 90 * time.Second, wantOK: true},
		{in: now.Add(-time.Minute).Format(http.TimeFormat), want: 0, wantOK: true},
	}
	for _, tc := range tests {
		got, ok := parseRetryAfter(tc.in, now)
		if got != tc.want || ok != tc.wantOK {
			t.Errorf("parseRetryAfter(%q) = %s, %t; want %s, %t", tc.in, got, ok, tc.want, tc.wantOK)
		}
	}
}

func TestFullJitterStaysInRange(t *testing.T) {
	for _, d := range []time.Duration{0, 1, time.Millisecond, 30 * time.Second} {
		for range 100 {
			if got := fullJitter(d); got < 0 || got > d {
				t.Fatalf("fullJitter(%s) = %s, want within [0, %s]", d, got, d)
			}
		}
	}
}

func TestIsIdempotent(t *testing.T) {
	tests := []struct {
		method string
		header string
		mark   bool
		want   bool
	}{
		{method: http.MethodGet, want: true},
		{method: http.MethodHead, want: true},
		{method: http.MethodOptions, want: true},
		{method: http.MethodPut, want: true},
		{method: http.MethodDelete, want: true},
		{method: http.MethodPost, want: false},
		{method: http.MethodPatch, want: false},
		{method: http.MethodPost, header: "Idempotency-Key", want: true},
		{method: http.MethodPatch, header: "X-Idempotency-Key", want: true},
		{method: http.MethodPost, mark: true, want: true},
		{method: http.MethodConnect, want: false},
	}
	for _, tc := range tests {
		ctx := context.Background()
		if tc.mark {
			ctx = MarkIdempotent(ctx)
		}
		req, _ := http.NewRequestWithContext(ctx, tc.method, "http://example.com/", nil)
		if tc.header != "" {
			req.Header.Set(tc.header, "abc")
		}
		if got := IsIdempotent(req); got != tc.want {
			t.Errorf("IsIdempotent(%s, header %q, marked %t) = %t, want %t", tc.method, tc.header, tc.mark, got, tc.want)
		}
	}
	if IsIdempotent(nil) {
		t.Error("IsIdempotent(nil) = true")
	}
}

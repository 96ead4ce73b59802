package cloudapi

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"
)

// fakeClock is a clock that only moves when a fake sleep advances it. It
// records every wait the transport asked for.
type fakeClock struct {
	mu    sync.Mutex
	now   time.Time
	waits []time.Duration
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Sleep records d and advances the clock without blocking, but still
// honours an already cancelled context.
func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.waits = append(c.waits, d)
	c.now = c.now.Add(d)
	return nil
}

func (c *fakeClock) Waits() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.waits...)
}

func (c *fakeClock) TotalWait() time.Duration {
	var total time.Duration
	for _, w := range c.Waits() {
		total += w
	}
	return total
}

// newFakeTimeTransport returns a transport whose clock and sleeps are fake
// and whose jitter is the identity, so waits are deterministic.
func newFakeTimeTransport(o Options) (*transport, *fakeClock) {
	clock := newFakeClock()
	t := newTransport(o)
	t.now = clock.Now
	t.sleep = clock.Sleep
	t.jitter = func(d time.Duration) time.Duration { return d }
	return t, clock
}

// recordedRequest is what the test server saw of one request.
type recordedRequest struct {
	Method string
	Path   string
	Header http.Header
	Body   string
}

// scriptedServer answers the n-th request with script[n], repeating the
// last entry, and records every request.
type scriptedServer struct {
	*httptest.Server
	mu       sync.Mutex
	requests []recordedRequest
}

type reply struct {
	status int
	header map[string]string
	body   string
}

func newScriptedServer(t *testing.T, script ...reply) *scriptedServer {
	t.Helper()
	if len(script) == 0 {
		script = []reply{{status: http.StatusOK, body: "ok"}}
	}
	s := &scriptedServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		n := len(s.requests)
		s.requests = append(s.requests, recordedRequest{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: string(body)})
		s.mu.Unlock()
		rep := script[min(n, len(script)-1)]
		for k, v := range rep.header {
			w.Header().Set(k, v)
		}
		w.WriteHeader(rep.status)
		_, _ = io.WriteString(w, rep.body)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *scriptedServer) Requests() []recordedRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]recordedRequest(nil), s.requests...)
}

// do sends a request through rt and returns the response with its body
// read, or the error.
func do(t *testing.T, rt http.RoundTripper, req *http.Request) (*http.Response, string, error) {
	t.Helper()
	resp, err := rt.RoundTrip(req)
	if err != nil {
		if resp != nil {
			resp.Body.Close()
			t.Errorf("RoundTrip returned both a response and error %v", err)
		}
		return nil, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading response body: %v", err)
	}
	return resp, string(body), nil
}

// newRequest builds a request whose body does not support GetBody, like
// many SDKs' requests, so replaying it relies on the transport's buffering.
func newRequest(t *testing.T, ctx context.Context, method, url, body string) *http.Request {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = struct{ io.Reader }{bytes.NewBufferString(body)}
	}
	req, err := http.NewRequestWithContext(ctx, method, url, r)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// closedServerURL returns the URL of a server that is no longer listening.
func closedServerURL(t *testing.T) string {
	t.Helper()
	s := httptest.NewServer(http.NotFoundHandler())
	url := s.URL
	s.Close()
	return url
}

// syncBuffer is a bytes.Buffer safe for concurrent writes.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func mustParseURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// roundTripErr sends req through rt, closes any response body and returns
// the error.
func roundTripErr(rt http.RoundTripper, req *http.Request) error {
	resp, err := rt.RoundTrip(req)
	if resp != nil {
		resp.Body.Close()
	}
	return err
}

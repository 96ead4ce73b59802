package simkit

import (
	"crypto/subtle"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
)

// TB is the part of testing.TB that a simulator's NewServer needs.
type TB interface {
	Helper()
	Cleanup(func())
}

// Listener serves a simulator's handler on a loopback port; a simulator's
// Server forwards its Start, Close and URL to one.
type Listener struct {
	handler http.Handler
	ts      *httptest.Server
}

// NewListener returns a Listener for h, not listening yet.
func NewListener(h http.Handler) Listener { return Listener{handler: h} }

// Start serves the cloud on a loopback port.
func (l *Listener) Start() { l.ts = httptest.NewServer(l.handler) }

// Close stops serving and waits for in-flight requests.
func (l *Listener) Close() {
	if l.ts != nil {
		l.ts.Close()
	}
}

// URL is the base URL, e.g. "http://127.0.0.1:41234" (no trailing
// slash); "" before Start.
func (l *Listener) URL() string {
	if l.ts == nil {
		return ""
	}
	return l.ts.URL
}

// StartForTest starts s and closes it when the test ends: the body of a
// simulator's NewServer.
func StartForTest[S interface {
	Start()
	Close()
}](t TB, s S) S {
	t.Helper()
	s.Start()
	t.Cleanup(s.Close)
	return s
}

// HasBearer reports whether r carries "Authorization: Bearer <token>"
// with a non-empty token.
func HasBearer(r *http.Request, token string) bool {
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	return ok && token != "" && subtle.ConstantTimeCompare([]byte(got), []byte(token)) == 1
}

// PositiveInt parses a positive integer query parameter; "" is def.
func PositiveInt(v string, def int) (int, error) {
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("want a positive integer, got %q", v)
	}
	return n, nil
}

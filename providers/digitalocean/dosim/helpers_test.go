package dosim

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/digitalocean/godo"
	"golang.org/x/oauth2"
)

// newClient is a real godo client for s with token, retrying retries times
// with tiny waits.
func newClient(t *testing.T, s *Server, token string, retries int) *godo.Client {
	t.Helper()
	hc := oauth2.NewClient(context.Background(), oauth2.StaticTokenSource(&oauth2.Token{AccessToken: token}))
	opts := []godo.ClientOpt{godo.SetBaseURL(s.URL() + "/")}
	if retries > 0 {
		opts = append(opts, godo.WithRetryAndBackoffs(godo.RetryConfig{
			RetryMax: retries, RetryWaitMin: godo.PtrTo(0.01), RetryWaitMax: godo.PtrTo(0.05),
		}))
	}
	c, err := godo.New(hc, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// setup starts a simulator and returns it with a client holding its token.
func setup(t *testing.T, opts Options) (*Server, *godo.Client) {
	t.Helper()
	s := NewServer(t, opts)
	return s, newClient(t, s, s.Token(), 0)
}

// wantStatus fails unless err is a godo error response with status.
func wantStatus(t *testing.T, err error, status int) {
	t.Helper()
	_ = errorResponse(t, err, status)
}

// errorResponse returns err as a godo error response, failing unless it is
// one with status.
func errorResponse(t *testing.T, err error, status int) *godo.ErrorResponse {
	t.Helper()
	var er *godo.ErrorResponse
	if !errors.As(err, &er) {
		t.Fatalf("err = %v, want a *godo.ErrorResponse with status %d", err, status)
	}
	if er.Response.StatusCode != status {
		t.Fatalf("status = %d (%v), want %d", er.Response.StatusCode, err, status)
	}
	return er
}

func ctx() context.Context { return context.Background() }

var _ http.RoundTripper = (*oauth2.Transport)(nil)

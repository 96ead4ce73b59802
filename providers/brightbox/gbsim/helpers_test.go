package gbsim

import (
	"context"
	"errors"
	"testing"

	brightbox "github.com/brightbox/gobrightbox/v2"
	"github.com/brightbox/gobrightbox/v2/clientcredentials"
	"github.com/brightbox/gobrightbox/v2/endpoint"
)

// connect is a real gobrightbox client for s, logged in with the API
// client's credentials.
func connect(t *testing.T, s *Server) *brightbox.Client {
	t.Helper()
	conf := &clientcredentials.Config{
		ID: s.ClientID(), Secret: s.ClientSecret(),
		Config: endpoint.Config{BaseURL: s.URL(), Account: s.Account(), Scopes: endpoint.InfrastructureScope},
	}
	c, err := brightbox.Connect(ctx(), conf)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// setup starts a simulator and returns it with a connected client.
func setup(t *testing.T, opts Options) (*Server, *brightbox.Client) {
	t.Helper()
	s := NewServer(t, opts)
	return s, connect(t, s)
}

// wantAPIError returns err as a *brightbox.APIError, failing unless it is one
// with status.
func wantAPIError(t *testing.T, err error, status int) *brightbox.APIError {
	t.Helper()
	var ae *brightbox.APIError
	if !errors.As(err, &ae) {
		t.Fatalf("err = %v, want a *brightbox.APIError with status %d", err, status)
	}
	if ae.StatusCode != status {
		t.Fatalf("status = %d (%v), want %d", ae.StatusCode, err, status)
	}
	return ae
}

// wantStatus fails unless err is a *brightbox.APIError with status.
func wantStatus(t *testing.T, err error, status int) {
	t.Helper()
	_ = wantAPIError(t, err, status)
}

func ctx() context.Context { return context.Background() }

func ptr[T any](v T) *T { return &v }

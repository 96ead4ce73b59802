package gbsim

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	brightbox "github.com/brightbox/gobrightbox/v2"
	"github.com/brightbox/gobrightbox/v2/clientcredentials"
	"github.com/brightbox/gobrightbox/v2/endpoint"
)

// connect is a real gobrightbox client for s, logged in with the API
// client's credentials.
func connect(t *testing.T, s *Server) *brightbox.Client {
	t.Helper()
	return connectAs(t, s, s.ClientID(), s.ClientSecret())
}

// connectAs is a real gobrightbox client for s, logged in as API client id
// with secret.
func connectAs(t *testing.T, s *Server, id, secret string) *brightbox.Client {
	t.Helper()
	conf := &clientcredentials.Config{
		ID: id, Secret: secret,
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

// token fetches an access token for the API client with its credentials
// in the form body.
func token(t *testing.T, s *Server) string {
	t.Helper()
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {s.ClientID()}, "client_secret": {s.ClientSecret()}}
	resp, err := http.PostForm(s.URL()+"/token/", form)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("token: %d, %v", resp.StatusCode, err)
	}
	return body.AccessToken
}

// call sends a raw API request with a bearer token and returns the status
// and the body.
func call(t *testing.T, s *Server, bearer, method, path, body string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx(), method, s.URL()+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+bearer)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, data
}

// wantErrorBody fails unless data is the API's error body with name.
func wantErrorBody(t *testing.T, data []byte, name string) {
	t.Helper()
	var body map[string]any
	if err := json.Unmarshal(data, &body); err != nil {
		t.Fatalf("error body %s: %v", data, err)
	}
	errs, _ := body["errors"].([]any)
	if body["error_name"] != name || len(errs) == 0 || len(body) != 2 {
		t.Errorf("error body = %s, want error_name %q and errors", data, name)
	}
}

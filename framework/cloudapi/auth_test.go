package cloudapi

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
)

func TestWithBearerToken(t *testing.T) {
	var got atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.Store(r.Header.Get("Authorization"))
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)

	token := "first"
	c := WithBearerToken(&http.Client{}, u.Host, func() (string, error) { return token, nil })
	for _, want := range []string{"first", "rotated"} {
		token = want
		resp, err := c.Get(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got.Load() != "Bearer "+want {
			t.Errorf("Authorization = %q, want %q", got.Load(), "Bearer "+want)
		}
	}

	// Another host never sees the token.
	other := WithBearerToken(&http.Client{}, "api.example.invalid", func() (string, error) { return "secret", nil })
	resp, err := other.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got.Load() != "" {
		t.Errorf("a request to another host carried %q", got.Load())
	}

	// A token that cannot be read fails the request, before it is sent.
	failing := WithBearerToken(&http.Client{}, u.Host, func() (string, error) { return "", errors.New("file gone") })
	if _, err := failing.Get(srv.URL); err == nil || !strings.Contains(err.Error(), "reading the API token: file gone") {
		t.Errorf("error = %v, want one about the token", err)
	}
}

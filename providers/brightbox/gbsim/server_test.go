package gbsim

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	brightbox "github.com/brightbox/gobrightbox/v2"
	"github.com/brightbox/gobrightbox/v2/endpoint"
	"github.com/brightbox/gobrightbox/v2/passwordcredentials"
	"golang.org/x/oauth2"
)

func TestClientCredentials(t *testing.T) {
	s, c := setup(t, Options{})
	if _, err := c.Servers(ctx()); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Zones(ctx()); err != nil {
		t.Fatal(err)
	}
	// One token for both calls, asked for with the credentials in Basic.
	if n := s.TokenRequests(); n != 1 {
		t.Errorf("token requests = %d, want 1", n)
	}
	// In the form body too.
	if status, _ := call(t, s, token(t, s), http.MethodGet, "/1.0/servers", ""); status != http.StatusOK {
		t.Errorf("servers with a form-grant token: %d", status)
	}
}

func TestTokenEndpointRefuses(t *testing.T) {
	s := NewServer(t, Options{})
	for name, form := range map[string]url.Values{
		"wrong secret":   {"grant_type": {"client_credentials"}, "client_id": {s.ClientID()}, "client_secret": {"nope"}},
		"unknown client": {"grant_type": {"client_credentials"}, "client_id": {"cli-nope0"}, "client_secret": {"x"}},
		"unknown scope": {"grant_type": {"client_credentials"}, "client_id": {s.ClientID()}, "client_secret": {s.ClientSecret()},
			"scope": {"infrastructure everything"}},
		"wrong password": {"grant_type": {"password"}, "client_id": {DefaultAppID}, "client_secret": {DefaultAppSecret},
			"username": {DefaultUsername}, "password": {"nope"}},
	} {
		resp, err := http.PostForm(s.URL()+"/token/", form)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusBadRequest {
			t.Errorf("%s: status %d, want 400 or 401", name, resp.StatusCode)
		}
	}
	resp, err := http.PostForm(s.URL()+"/token", url.Values{"grant_type": {"client_credentials"}, "client_id": {s.ClientID()},
		"client_secret": {s.ClientSecret()}, "scope": {"infrastructure orbit"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("k8ssdk's /token with its scopes: %d", resp.StatusCode)
	}
	c := connectAs(t, s, s.ClientID(), "s3cr3t-value")
	_, err = c.Servers(ctx())
	var re *oauth2.RetrieveError
	if !errors.As(err, &re) || re.ErrorCode != "invalid_client" {
		t.Errorf("servers with a wrong secret: %v, want invalid_client", err)
	}
	if strings.Contains(err.Error(), "s3cr3t-value") {
		t.Errorf("the error shows the secret: %v", err)
	}
}

func TestPasswordGrant(t *testing.T) {
	s := NewServer(t, Options{})
	env := s.UserEnv(s.URL())
	conf := &passwordcredentials.Config{
		UserName: env["BRIGHTBOX_USER_NAME"], Password: env["BRIGHTBOX_PASSWORD"], ID: DefaultAppID, Secret: DefaultAppSecret,
		Config: endpoint.Config{BaseURL: env["BRIGHTBOX_API_URL"], Account: env["BRIGHTBOX_ACCOUNT"], Scopes: endpoint.InfrastructureScope},
	}
	c, err := brightbox.Connect(ctx(), conf)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Servers(ctx()); err != nil {
		t.Fatal(err)
	}
	conf.Password = "wrong"
	if _, err := brightbox.Connect(ctx(), conf); err == nil {
		t.Error("a wrong password connected")
	}
}

func TestExpiredToken(t *testing.T) {
	s, c := setup(t, Options{})
	if _, err := c.Servers(ctx()); err != nil {
		t.Fatal(err)
	}
	s.ExpireTokens()
	// gobrightbox keeps its token until expires_in says so: the API's 401
	// is the client's to act on, by fetching a new token.
	_, err := c.Servers(ctx())
	ae := wantAPIError(t, err, http.StatusUnauthorized)
	if ae.AuthError != "invalid_token" {
		t.Errorf("401 body: error %q", ae.AuthError)
	}
	if _, err := connect(t, s).Servers(ctx()); err != nil {
		t.Fatalf("a new token: %v", err)
	}
	if n := s.TokenRequests(); n != 2 {
		t.Errorf("token requests = %d, want 2", n)
	}
}

func TestShortTokensAreRefreshed(t *testing.T) {
	// x/oauth2 treats a token as expired 10s early: with expires_in 10s
	// every call fetches a new one, as a client does when a token runs
	// out mid-run.
	s, c := setup(t, Options{TokenTTL: 10 * time.Second})
	for range 3 {
		if _, err := c.Servers(ctx()); err != nil {
			t.Fatal(err)
		}
	}
	if n := s.TokenRequests(); n != 3 {
		t.Errorf("token requests = %d, want 3", n)
	}
}

func TestAccountID(t *testing.T) {
	s := NewServer(t, Options{})
	bearer := token(t, s)
	if status, _ := call(t, s, bearer, http.MethodGet, "/1.0/servers?account_id="+s.Account(), ""); status != http.StatusOK {
		t.Errorf("own account: %d", status)
	}
	status, body := call(t, s, bearer, http.MethodGet, "/1.0/servers?account_id=acc-other", "")
	if status != http.StatusForbidden {
		t.Errorf("other account: %d, want 403", status)
	}
	wantErrorBody(t, body, "Forbidden")
	if status, _ := call(t, s, "", http.MethodGet, "/1.0/servers", ""); status != http.StatusUnauthorized {
		t.Errorf("no token: %d, want 401", status)
	}
	status, body = call(t, s, bearer, http.MethodGet, "/1.0/database_servers", "")
	if status != http.StatusNotFound {
		t.Errorf("unknown endpoint: %d", status)
	}
	wantErrorBody(t, body, "missing_resource")
	// A fresh cloud has no volume: the list is empty, not null.
	if status, body := call(t, s, bearer, http.MethodGet, "/1.0/volumes", ""); status != http.StatusOK || strings.TrimSpace(string(body)) != "[]" {
		t.Errorf("volumes of a fresh cloud: %d %s, want 200 []", status, body)
	}
}

package gbsim

import (
	"encoding/json"
	"net/http"
	"net/url"
	"testing"

	brightbox "github.com/brightbox/gobrightbox/v2"
	"github.com/brightbox/gobrightbox/v2/clientcredentials"
	"github.com/brightbox/gobrightbox/v2/endpoint"
)

// TestOtherAccountSeesOnlyItsServers: gobrightbox with the other
// account's API client, on the same URL, reaches only that account: its
// one server listed, 404 missing_resource for this account's, 403 for
// this account's ID; this account's client still sees only its own.
func TestOtherAccountSeesOnlyItsServers(t *testing.T) {
	s, mine := setup(t, Options{})
	srv := s.AddServer(CloudServer{Name: "node-0"})
	o := s.OtherAccountServer()
	if s.OtherAccountServer() != o {
		t.Fatal("a second call made another account")
	}
	other := connectTo(t, s, OtherClientID, OtherClientSecret, OtherAccountID)

	accounts, err := other.Accounts(ctx())
	if err != nil {
		t.Fatal(err)
	}
	if len(accounts) != 1 || accounts[0].ID != OtherAccountID {
		t.Errorf("the other account's client lists accounts %+v, want only %s", accounts, OtherAccountID)
	}
	list, err := other.Servers(ctx())
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].Name != OtherServerName {
		t.Fatalf("the other account lists %+v, want only %s", list, OtherServerName)
	}
	otherID := list[0].ID
	if otherID == srv.ID || otherID != o.Servers()[0].ID {
		t.Errorf("the other account's server is %s; this account's is %s", otherID, srv.ID)
	}
	_, err = other.Server(ctx(), srv.ID)
	if ae := wantAPIError(t, err, http.StatusNotFound); ae.ErrorName != errMissing {
		t.Errorf("error_name = %q, want %q", ae.ErrorName, errMissing)
	}

	list, err = mine.Servers(ctx())
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].ID != srv.ID {
		t.Errorf("this account lists %+v, want only node-0", list)
	}
	_, err = mine.Server(ctx(), otherID)
	wantStatus(t, err, http.StatusNotFound)
}

// TestOtherAccountTokens: a token request in the form body reaches the
// other account's token endpoint (and its body the endpoint whole); its
// token is refused this account's ID; a wrong secret for the other client
// is the other endpoint's invalid_client; a password grant stays this
// account's.
func TestOtherAccountTokens(t *testing.T) {
	s := NewServer(t, Options{})
	s.OtherAccountServer()

	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {OtherClientID}, "client_secret": {OtherClientSecret}}
	tok := postToken(t, s, form, http.StatusOK)
	status, body := call(t, s, tok, http.MethodGet, "/1.0/servers", "")
	var servers []struct{ Name string }
	if err := json.Unmarshal(body, &servers); status != http.StatusOK || err != nil || len(servers) != 1 || servers[0].Name != OtherServerName {
		t.Errorf("GET /1.0/servers with the other account's token: %d %s", status, body)
	}
	if status, body := call(t, s, tok, http.MethodGet, "/1.0/servers?account_id="+DefaultAccount, ""); status != http.StatusForbidden {
		t.Errorf("the other account's token for %s: %d %s, want 403", DefaultAccount, status, body)
	}
	if status, _ := call(t, s, token(t, s), http.MethodGet, "/1.0/servers?account_id="+OtherAccountID, ""); status != http.StatusForbidden {
		t.Errorf("this account's token for %s: %d, want 403", OtherAccountID, status)
	}

	form.Set("client_secret", "wrong")
	postToken(t, s, form, http.StatusUnauthorized)
	if n := s.OtherAccountServer().TokenRequests(); n != 2 {
		t.Errorf("the other account's token endpoint served %d requests, want 2", n)
	}
	postToken(t, s, url.Values{"grant_type": {"password"}, "client_id": {DefaultAppID}, "client_secret": {DefaultAppSecret},
		"username": {DefaultUsername}, "password": {DefaultPassword}}, http.StatusOK)
	if n := s.TokenRequests(); n != 2 { // token(t, s) above, and the password grant
		t.Errorf("this account's token endpoint served %d requests, want 2", n)
	}
}

// connectTo is a real gobrightbox client for s, logged in as API client
// id with secret, scoped to account.
func connectTo(t *testing.T, s *Server, id, secret, account string) *brightbox.Client {
	t.Helper()
	c, err := brightbox.Connect(ctx(), &clientcredentials.Config{
		ID: id, Secret: secret,
		Config: endpoint.Config{BaseURL: s.URL(), Account: account, Scopes: endpoint.InfrastructureScope},
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// postToken posts form to the token endpoint, fails unless it answers
// status, and returns the access token.
func postToken(t *testing.T, s *Server, form url.Values, status int) string {
	t.Helper()
	resp, err := http.PostForm(s.URL()+"/token/", form)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || resp.StatusCode != status {
		t.Fatalf("token: %d, %v; want %d", resp.StatusCode, err, status)
	}
	return body.AccessToken
}

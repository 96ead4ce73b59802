package simkit

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// DefaultOAuth2TTL is how long an access token lasts when OAuth2Options
// leave TTL 0: Brightbox's two hours.
const DefaultOAuth2TTL = 2 * time.Hour

// Errors of OAuth2.Check.
var (
	// ErrNoToken: the request has no "Authorization: Bearer" header.
	ErrNoToken = errors.New("no bearer token")
	// ErrInvalidToken: the token was never issued, or was revoked.
	ErrInvalidToken = errors.New("invalid access token")
	// ErrExpiredToken: the token's expires_in has passed.
	ErrExpiredToken = errors.New("the access token expired")
)

// OAuth2Options configure an OAuth2.
type OAuth2Options struct {
	// TTL is how long an access token is valid, as expires_in tells the
	// client; 0 means DefaultOAuth2TTL.
	TTL time.Duration
	// Now is the server's clock; nil means time.Now. A test moves it on to
	// expire the tokens issued.
	Now func() time.Time
}

// OAuth2 is an OAuth2 authorization server's token endpoint (RFC 6749)
// with the grants a cloud API's clients use, and the check of the bearer
// tokens it issues (RFC 6750), as Brightbox runs them:
//
//   - client_credentials (§4.4): an API client's ID and secret;
//   - password (§4.3): a user's name and password, through a known client;
//     it also issues a refresh token;
//   - refresh_token (§6): a new access token for a refresh token, issued to
//     the same client.
//
// A client authenticates with HTTP Basic (its ID and secret form-encoded,
// §2.3.1) or with client_id and client_secret in the form body, not both
// differently. Every access token expires after the TTL; Check refuses an
// expired one, so the API answers 401 and the client fetches another.
// OAuth2 is safe for concurrent use.
type OAuth2 struct {
	ttl time.Duration
	now func() time.Time

	mu      sync.Mutex
	clients map[string]string // client ID -> secret
	users   map[string]string // user name -> password
	access  map[string]issued // access token -> grant
	refresh map[string]Grant  // refresh token -> grant
}

// Grant is whom a token was issued to.
type Grant struct {
	// ClientID is the client that asked for the token.
	ClientID string
	// Username is the user of a password grant, "" for client
	// credentials.
	Username string
	// Scope is the scope the client asked for, as it wrote it.
	Scope string
}

type issued struct {
	Grant
	expires time.Time
}

// NewOAuth2 returns a token endpoint that knows no client yet.
func NewOAuth2(o OAuth2Options) *OAuth2 {
	if o.TTL <= 0 {
		o.TTL = DefaultOAuth2TTL
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &OAuth2{
		ttl: o.TTL, now: o.Now,
		clients: map[string]string{}, users: map[string]string{},
		access: map[string]issued{}, refresh: map[string]Grant{},
	}
}

// SetClient makes the endpoint accept client id with secret (and no
// longer with its old secret).
func (o *OAuth2) SetClient(id, secret string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.clients[id] = secret
}

// SetUser makes the password grant accept username with password.
func (o *OAuth2) SetUser(username, password string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.users[username] = password
}

// ExpireTokens makes every access token issued so far expire; refresh
// tokens stay valid.
func (o *OAuth2) ExpireTokens() {
	o.mu.Lock()
	defer o.mu.Unlock()
	clear(o.access)
}

// Check returns the grant of the request's bearer token: ErrNoToken,
// ErrInvalidToken or ErrExpiredToken when there is none to accept.
func (o *OAuth2) Check(r *http.Request) (Grant, error) {
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || token == "" {
		return Grant{}, ErrNoToken
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	t, ok := o.access[token]
	switch {
	case !ok:
		return Grant{}, ErrInvalidToken
	case !o.now().Before(t.expires):
		return Grant{}, ErrExpiredToken
	}
	return t.Grant, nil
}

// BearerChallenge is the WWW-Authenticate header of a 401 to a request
// whose token Check refused (RFC 6750 §3): with error="invalid_token"
// when it carried one.
func BearerChallenge(realm string, err error) string {
	h := `Bearer realm="` + realm + `"`
	if err != nil && !errors.Is(err, ErrNoToken) {
		h += `, error="invalid_token", error_description="` + err.Error() + `"`
	}
	return h
}

// Token serves the token endpoint: register it (POST) with NoAuth and
// NoWrite. It answers a token (RFC 6749 §5.1) or an error (§5.2), in JSON,
// never cached.
func (o *OAuth2) Token(r *http.Request) Response {
	if ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); ct != "application/x-www-form-urlencoded" {
		return oauthError(http.StatusBadRequest, "invalid_request", "the body must be application/x-www-form-urlencoded")
	}
	if err := r.ParseForm(); err != nil {
		return oauthError(http.StatusBadRequest, "invalid_request", "the body does not parse: "+err.Error())
	}
	form := r.PostForm
	client, errResp := o.client(r, form)
	if errResp != nil {
		return *errResp
	}
	g := Grant{ClientID: client, Scope: form.Get("scope")}
	o.mu.Lock()
	defer o.mu.Unlock()
	withRefresh := false
	switch grant := form.Get("grant_type"); grant {
	case "client_credentials":
	case "password":
		want, known := o.users[form.Get("username")]
		if !known || !equal(form.Get("password"), want) {
			return oauthError(http.StatusBadRequest, "invalid_grant", "wrong user name or password")
		}
		g.Username, withRefresh = form.Get("username"), true
	case "refresh_token":
		prev, known := o.refresh[form.Get("refresh_token")]
		if !known || prev.ClientID != client {
			return oauthError(http.StatusBadRequest, "invalid_grant", "unknown refresh token")
		}
		g = prev
	case "":
		return oauthError(http.StatusBadRequest, "invalid_request", "no grant_type")
	default:
		return oauthError(http.StatusBadRequest, "unsupported_grant_type", "grant_type "+grant+" is not supported")
	}
	return o.issue(g, withRefresh, form.Get("refresh_token"))
}

// client authenticates the client, by Basic credentials or form
// parameters.
func (o *OAuth2) client(r *http.Request, form url.Values) (string, *Response) {
	id, secret, basic := r.BasicAuth()
	if basic {
		// The ID and secret are form-encoded inside Basic (§2.3.1).
		var err1, err2 error
		id, err1 = url.QueryUnescape(id)
		secret, err2 = url.QueryUnescape(secret)
		if err1 != nil || err2 != nil {
			resp := oauthError(http.StatusBadRequest, "invalid_request", "malformed client credentials")
			return "", &resp
		}
	}
	if fid := form.Get("client_id"); fid != "" || form.Has("client_secret") {
		if basic && (fid != id || form.Get("client_secret") != secret) {
			resp := oauthError(http.StatusBadRequest, "invalid_request", "more than one client authentication, not alike")
			return "", &resp
		}
		id, secret = fid, form.Get("client_secret")
	}
	o.mu.Lock()
	want, known := o.clients[id]
	o.mu.Unlock()
	if id == "" || !known || !equal(secret, want) {
		resp := oauthError(http.StatusUnauthorized, "invalid_client", "unknown client or wrong secret")
		resp.Header.Set("WWW-Authenticate", BasicChallenge("token"))
		return "", &resp
	}
	return id, nil
}

// issue makes an access token for g (and a refresh token: the one given,
// or a new one when withRefresh). The caller holds o.mu.
func (o *OAuth2) issue(g Grant, withRefresh bool, refresh string) Response {
	token := newToken()
	o.access[token] = issued{Grant: g, expires: o.now().Add(o.ttl)}
	body := map[string]any{"access_token": token, "token_type": "Bearer", "expires_in": int(o.ttl / time.Second)}
	if g.Scope != "" {
		body["scope"] = g.Scope
	}
	if withRefresh {
		refresh = newToken()
		o.refresh[refresh] = g
	}
	if refresh != "" {
		body["refresh_token"] = refresh
	}
	return Response{Status: http.StatusOK, Body: body, Header: noStore()}
}

func oauthError(status int, code, description string) Response {
	return Response{Status: status, Body: map[string]string{"error": code, "error_description": description}, Header: noStore()}
}

// noStore are the headers of every token endpoint answer (§5.1).
func noStore() http.Header {
	return http.Header{"Cache-Control": {"no-store"}, "Pragma": {"no-cache"}}
}

func newToken() string {
	b := make([]byte, 20)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return hex.EncodeToString(b)
}

func equal(got, want string) bool {
	return subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

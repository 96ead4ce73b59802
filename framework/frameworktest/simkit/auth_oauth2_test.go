package simkit

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

// clock is a server clock a test moves on.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// oauthSim is a Brightbox-like API: POST /token/ issues tokens, GET
// /1.0/account answers who the bearer token belongs to.
type oauthSim struct {
	*OAuth2
	kit   *Kit
	url   string
	clock *clock
}

func newOAuthSim(t *testing.T, ttl time.Duration) *oauthSim {
	s := &oauthSim{clock: &clock{t: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)}}
	s.OAuth2 = NewOAuth2(OAuth2Options{TTL: ttl, Now: s.clock.Now})
	s.SetClient("cli-abcde", "client-secret")
	s.SetClient("app-12345", "app-secret")
	s.SetUser("jane@example.com", "jane-password")
	s.kit = New(Options{Auth: func(r *http.Request) *Response {
		if _, err := s.Check(r); err != nil {
			return &Response{Status: http.StatusUnauthorized, Body: map[string]string{"error": err.Error()},
				Header: http.Header{"Www-Authenticate": {BearerChallenge("api", err)}}}
		}
		return nil
	}})
	mux := http.NewServeMux()
	s.kit.Handle(mux, "POST /token/", s.Token, NoAuth, NoWrite)
	s.kit.Handle(mux, "GET /1.0/account", func(r *http.Request) Response {
		g, _ := s.Check(r)
		return JSON(http.StatusOK, g)
	})
	l := NewListener(mux)
	StartForTest(t, &l)
	s.url = l.URL()
	return s
}

func (s *oauthSim) tokenRequests() int { return s.kit.Stats()["POST /token/"] }

func (s *oauthSim) account(t *testing.T, c *http.Client) (Grant, error) {
	t.Helper()
	resp, err := c.Get(s.url + "/1.0/account")
	if err != nil {
		return Grant{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return Grant{}, errors.New(resp.Status + ": " + resp.Header.Get("WWW-Authenticate"))
	}
	var g Grant
	return g, json.NewDecoder(resp.Body).Decode(&g)
}

// TestOAuth2ClientCredentials: x/oauth2's client-credentials flow, as
// gobrightbox runs it, with the client's ID and secret in Basic auth, in
// the form body, or found out by trying.
func TestOAuth2ClientCredentials(t *testing.T) {
	for name, style := range map[string]oauth2.AuthStyle{
		"basic": oauth2.AuthStyleInHeader, "form": oauth2.AuthStyleInParams, "auto": oauth2.AuthStyleAutoDetect,
	} {
		t.Run(name, func(t *testing.T) {
			s := newOAuthSim(t, time.Hour)
			cfg := clientcredentials.Config{ClientID: "cli-abcde", ClientSecret: "client-secret",
				TokenURL: s.url + "/token/", Scopes: []string{"infrastructure", "orbit"}, AuthStyle: style}
			c := cfg.Client(t.Context())
			for range 2 {
				g, err := s.account(t, c)
				if err != nil || g.ClientID != "cli-abcde" || g.Username != "" || g.Scope != "infrastructure orbit" {
					t.Fatalf("account: %+v %v", g, err)
				}
			}
			if n := s.tokenRequests(); n != 1 {
				t.Errorf("%d token requests for two calls within the TTL, want 1", n)
			}

			bad := cfg
			bad.ClientSecret = "guess"
			_, err := s.account(t, bad.Client(t.Context()))
			var re *oauth2.RetrieveError
			if !errors.As(err, &re) || re.ErrorCode != "invalid_client" {
				t.Errorf("wrong secret: %v", err)
			}
		})
	}
}

// TestOAuth2Expiry: a token past its expires_in is refused with 401, and a
// client that sees its token expire fetches a new one.
func TestOAuth2Expiry(t *testing.T) {
	s := newOAuthSim(t, time.Hour)
	cfg := clientcredentials.Config{ClientID: "cli-abcde", ClientSecret: "client-secret", TokenURL: s.url + "/token/"}
	tok, err := cfg.Token(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if left := time.Until(tok.Expiry); left < 59*time.Minute || left > time.Hour {
		t.Errorf("expires_in gave an expiry %v away, want an hour", left)
	}
	old := oauth2.NewClient(t.Context(), oauth2.StaticTokenSource(tok))
	if _, err := s.account(t, old); err != nil {
		t.Fatalf("fresh token: %v", err)
	}
	s.clock.Add(time.Hour)
	if _, err := s.account(t, old); err == nil || !strings.Contains(err.Error(), `error="invalid_token"`) {
		t.Errorf("expired token: %v, want a 401 with error=invalid_token", err)
	}

	// expires_in below x/oauth2's ten-second margin: the client treats each
	// token as expired at once and fetches a new one per call.
	short := newOAuthSim(t, 5*time.Second)
	cfg.TokenURL = short.url + "/token/"
	c := cfg.Client(t.Context())
	for i := range 3 {
		if _, err := short.account(t, c); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	if n := short.tokenRequests(); n != 3 {
		t.Errorf("%d token requests for three calls with expiring tokens, want 3", n)
	}
}

// TestOAuth2PasswordAndRefresh: the password grant through an API client,
// and the refresh grant x/oauth2 uses once the access token expires.
func TestOAuth2PasswordAndRefresh(t *testing.T) {
	s := newOAuthSim(t, time.Hour)
	cfg := oauth2.Config{ClientID: "app-12345", ClientSecret: "app-secret", Endpoint: oauth2.Endpoint{TokenURL: s.url + "/token/"}}
	tok, err := cfg.PasswordCredentialsToken(t.Context(), "jane@example.com", "jane-password")
	if err != nil || tok.RefreshToken == "" {
		t.Fatalf("password grant: %+v %v", tok, err)
	}
	if g, err := s.account(t, cfg.Client(t.Context(), tok)); err != nil || g.Username != "jane@example.com" || g.ClientID != "app-12345" {
		t.Errorf("account: %+v %v", g, err)
	}

	s.ExpireTokens()
	expired := *tok
	expired.Expiry = time.Now().Add(-time.Minute) // the client learns it expired
	fresh, err := cfg.TokenSource(t.Context(), &expired).Token()
	if err != nil || fresh.AccessToken == tok.AccessToken {
		t.Fatalf("refresh: %+v %v", fresh, err)
	}
	if g, err := s.account(t, cfg.Client(t.Context(), fresh)); err != nil || g.Username != "jane@example.com" {
		t.Errorf("account with the refreshed token: %+v %v", g, err)
	}

	if _, err := cfg.PasswordCredentialsToken(t.Context(), "jane@example.com", "guess"); !isOAuthError(err, "invalid_grant") {
		t.Errorf("wrong password: %v", err)
	}
	other := cfg
	other.ClientID, other.ClientSecret = "cli-abcde", "client-secret"
	if _, err := other.TokenSource(t.Context(), &expired).Token(); !isOAuthError(err, "invalid_grant") {
		t.Errorf("another client's refresh token: %v", err)
	}
}

func isOAuthError(err error, code string) bool {
	var re *oauth2.RetrieveError
	return errors.As(err, &re) && re.ErrorCode == code
}

// TestOAuth2TokenErrors: what RFC 6749 §5.2 says a token endpoint answers
// to a malformed request.
func TestOAuth2TokenErrors(t *testing.T) {
	s := newOAuthSim(t, time.Hour)
	post := func(contentType, body string, basic bool) (int, string, http.Header) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, s.url+"/token/", strings.NewReader(body))
		req.Header.Set("Content-Type", contentType)
		if basic {
			req.SetBasicAuth("cli-abcde", "client-secret")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		var e struct{ Error string }
		_ = json.Unmarshal(data, &e)
		return resp.StatusCode, e.Error, resp.Header
	}
	form := "application/x-www-form-urlencoded"
	for name, tc := range map[string]struct {
		contentType, body string
		basic             bool
		status            int
		code              string
	}{
		"json body":           {"application/json", `{"grant_type":"client_credentials"}`, true, 400, "invalid_request"},
		"no grant":            {form, "scope=x", true, 400, "invalid_request"},
		"unsupported grant":   {form, "grant_type=authorization_code", true, 400, "unsupported_grant_type"},
		"no client":           {form, "grant_type=client_credentials", false, 401, "invalid_client"},
		"two clients":         {form, "grant_type=client_credentials&client_id=app-12345&client_secret=app-secret", true, 400, "invalid_request"},
		"unknown refresh":     {form, "grant_type=refresh_token&refresh_token=nope", true, 400, "invalid_grant"},
		"form and basic same": {form, "grant_type=client_credentials&client_id=cli-abcde&client_secret=client-secret", true, 200, ""},
	} {
		status, code, h := post(tc.contentType, tc.body, tc.basic)
		if status != tc.status || code != tc.code || h.Get("Cache-Control") != "no-store" || !strings.HasPrefix(h.Get("Content-Type"), "application/json") {
			t.Errorf("%s: %d %q %v, want %d %q", name, status, code, h, tc.status, tc.code)
		}
	}
	// A client ID with reserved characters is form-encoded inside Basic.
	s.SetClient("cli:weird id", "p@ss:word")
	cfg := clientcredentials.Config{ClientID: "cli:weird id", ClientSecret: "p@ss:word", TokenURL: s.url + "/token/", AuthStyle: oauth2.AuthStyleInHeader}
	if _, err := cfg.Token(t.Context()); err != nil {
		t.Errorf("form-encoded Basic credentials: %v", err)
	}
}

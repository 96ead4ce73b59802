package cloud

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	brightbox "github.com/brightbox/gobrightbox/v2"
	"github.com/brightbox/gobrightbox/v2/clientcredentials"
	"github.com/brightbox/gobrightbox/v2/endpoint"
	"github.com/brightbox/gobrightbox/v2/passwordcredentials"
	"golang.org/x/oauth2"
	"k8s.io/klog/v2"

	"github.com/ccmkit/ccmkit/framework/cloudapi"
)

// This file builds the gobrightbox client and holds the rules every call
// follows:
//
//   - every request, the OAuth2 token requests included, goes through the
//     framework's *http.Client (User-Agent, rate limit, retries honouring
//     Retry-After, metrics, redacted logs); x/oauth2 takes it from the
//     context (oauth2.HTTPClient);
//   - a token is fetched with the credentials as they are at that moment,
//     so a rotated *_FILE secret applies at the next token, and kept until
//     it expires; a token the API refuses before then (a 401) costs one new
//     token, shared by every request that saw the refusal, and the request
//     is sent again once, so an expiry mid-run fails no call;
//   - only the API's own 404 for the one resource a request named is an
//     authoritative not-found (see One and IsNotFound); a 401, a 5xx, a
//     timeout or a proxy's HTML 404 is an error, so no Node is deleted and
//     no volume is reported gone on it.

// ProviderName is the cloud's name in the API client's User-Agent, logs
// and metrics, and the CCM's --cloud-provider value and providerID scheme
// (brightbox.ProviderName), which must not change.
const ProviderName = "brightbox"

// Connect returns a gobrightbox client for cr over hc, scoped to the
// account: BRIGHTBOX_ACCOUNT, or the only account the credentials can use.
// It fetches a token and lists the accounts, so wrong credentials, a wrong
// URL or a wrong account fail here, named by their variable. hc is the
// caller's: the CCM's comes from the framework (its --cloud-api-* flags),
// the CSI driver's from framework/cloudapi.
func Connect(ctx context.Context, cr *Credentials, hc *http.Client) (*brightbox.Client, error) {
	base, err := cr.APIBase()
	if err != nil {
		return nil, err
	}
	a := newAuth(cr, base, hc)
	if _, err := a.token(ctx, nil); err != nil {
		return nil, err
	}
	c, err := brightbox.Connect(ctx, a.withAccount(""))
	if err != nil {
		return nil, fmt.Errorf("building the Brightbox client: %w", err)
	}
	accounts, err := c.Accounts(cloudapi.WithOperation(ctx, "accounts.list"))
	if err != nil {
		return nil, fmt.Errorf("listing the accounts the credentials can use at %s (BRIGHTBOX_API_URL): %w", redactedBase(base), err)
	}
	account, err := pickAccount(cr.Account, accounts)
	if err != nil {
		return nil, err
	}
	c, err = brightbox.Connect(ctx, a.withAccount(account))
	if err != nil {
		return nil, fmt.Errorf("building the Brightbox client: %w", err)
	}
	return c, nil
}

// pickAccount returns want when the credentials can use it, or the only
// account they can use when want is empty.
func pickAccount(want string, accounts []brightbox.Account) (string, error) {
	ids := make([]string, 0, len(accounts))
	for _, acc := range accounts {
		if acc.ID == "" {
			return "", errors.New("listing the accounts: malformed response: an account without an ID")
		}
		if acc.ID == want {
			return want, nil
		}
		ids = append(ids, acc.ID)
	}
	switch {
	case want != "":
		return "", fmt.Errorf("BRIGHTBOX_ACCOUNT: the credentials cannot use account %s (they can use: %s)", want, strings.Join(ids, ", "))
	case len(ids) == 0:
		return "", errors.New("BRIGHTBOX_ACCOUNT: the credentials can use no account")
	case len(ids) > 1:
		return "", fmt.Errorf("BRIGHTBOX_ACCOUNT: the credentials can use several accounts (%s): set BRIGHTBOX_ACCOUNT to one", strings.Join(ids, ", "))
	}
	return ids[0], nil
}

// redactedBase is the API URL as logs and errors may show it.
func redactedBase(base string) string {
	u, err := url.Parse(base)
	if err != nil {
		return "(invalid URL)"
	}
	return cloudapi.RedactURL(u)
}

// auth holds the OAuth2 token of one configuration and adds it to the
// API's requests.
type auth struct {
	cfg  *Credentials
	base string // BRIGHTBOX_API_URL with a trailing slash
	host string // the API's host: the only one that gets the token
	hc   *http.Client

	sem chan struct{} // held while tok is read or fetched
	tok *oauth2.Token
	// reauth paces the fetches made because the API refused a token, so
	// an API that refuses every token does not cost one fetch per call.
	reauth *cloudapi.ReauthBackoff
}

func newAuth(cfg *Credentials, base string, hc *http.Client) *auth {
	u, _ := url.Parse(base) // apiBase parsed it already
	return &auth{cfg: cfg, base: base, host: u.Host, hc: hc, sem: make(chan struct{}, 1), reauth: cloudapi.NewReauthBackoff(nil)}
}

// token returns the current token, fetching a new one when there is none
// or it has expired. refused is a token the API just refused, or nil: if
// it is still the current one, it is dropped first (if another request
// replaced it already, that one's new token serves). One request fetches
// at a time; the others wait for its token, or for their context to end.
func (a *auth) token(ctx context.Context, refused *oauth2.Token) (*oauth2.Token, error) {
	select {
	case a.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for an API token: %w", context.Cause(ctx))
	}
	defer func() { <-a.sem }()
	if refused != nil && a.tok != nil && a.tok.AccessToken == refused.AccessToken {
		again, err := a.reauth.Attempt("Brightbox API token")
		if err != nil {
			return nil, err
		}
		if again {
			klog.FromContext(ctx).Info("The Brightbox API refused a fresh token; requesting another one")
		}
		a.tok = nil
	}
	if a.tok.Valid() {
		return a.tok, nil
	}
	tok, err := a.fetch(ctx)
	if err != nil {
		return nil, err
	}
	a.tok = tok
	return tok, nil
}

// fetch asks the token endpoint for a new token with the credentials as
// they are now (a *_FILE secret is re-read). The error names the variables
// to check and never holds a secret.
func (a *auth) fetch(ctx context.Context) (*oauth2.Token, error) {
	// A token request changes nothing the next one depends on: the
	// framework's transport may retry it.
	ctx = cloudapi.MarkIdempotent(cloudapi.WithOperation(ctx, "token.create"))
	ctx = context.WithValue(ctx, oauth2.HTTPClient, a.hc)
	ep := endpoint.Config{BaseURL: a.base, Scopes: endpoint.InfrastructureScope}
	var (
		oc    brightbox.Oauth2
		names string
	)
	client, secret, err := a.revealClient()
	if err != nil {
		return nil, err
	}
	if a.cfg.userGrant() {
		user, err := a.cfg.UserName.Reveal()
		if err != nil {
			return nil, fmt.Errorf("BRIGHTBOX_USER_NAME: %w", err)
		}
		password, err := a.cfg.Password.Reveal()
		if err != nil {
			return nil, fmt.Errorf("BRIGHTBOX_PASSWORD: %w", err)
		}
		oc = &passwordcredentials.Config{UserName: user, Password: password, ID: client, Secret: secret, Config: ep}
		names = "BRIGHTBOX_USER_NAME, BRIGHTBOX_PASSWORD and BRIGHTBOX_CLIENT"
	} else {
		oc = &clientcredentials.Config{ID: client, Secret: secret, Config: ep}
		names = "BRIGHTBOX_CLIENT and BRIGHTBOX_CLIENT_SECRET"
	}
	_, ts, err := oc.Client(ctx)
	var tok *oauth2.Token
	if err == nil {
		tok, err = ts.Token()
	}
	if err != nil {
		return nil, fmt.Errorf("getting a token from %stoken/ (check %s, and BRIGHTBOX_API_URL): %w", redactedBase(a.base), names, tokenError(err))
	}
	if tok.AccessToken == "" {
		return nil, fmt.Errorf("getting a token from %stoken/: malformed response: no access_token", redactedBase(a.base))
	}
	return tok, nil
}

// revealClient returns the OAuth client ID and secret: the configured ones,
// or the default application's for a user without BRIGHTBOX_CLIENT.
func (a *auth) revealClient() (id, secret string, err error) {
	if a.cfg.userGrant() && a.cfg.Client.IsZero() {
		return defaultAppClientID, defaultAppClientSecret, nil
	}
	if id, err = a.cfg.Client.Reveal(); err != nil {
		return "", "", fmt.Errorf("BRIGHTBOX_CLIENT: %w", err)
	}
	if secret, err = a.cfg.ClientSecret.Reveal(); err != nil {
		return "", "", fmt.Errorf("BRIGHTBOX_CLIENT_SECRET: %w", err)
	}
	return id, secret, nil
}

// tokenError keeps what the token endpoint said (its status and OAuth2
// error code) and drops the rest of x/oauth2's error, which quotes the
// whole response body.
func tokenError(err error) error {
	var re *oauth2.RetrieveError
	if !errors.As(err, &re) || re.Response == nil {
		return err
	}
	msg := re.Response.Status
	if re.ErrorCode != "" {
		msg += ": " + re.ErrorCode
	}
	if re.ErrorDescription != "" {
		msg += " (" + re.ErrorDescription + ")"
	}
	return errors.New(msg)
}

// withAccount returns the brightbox.Oauth2 that brightbox.Connect takes:
// this auth's requests, scoped to account ("" for none).
func (a *auth) withAccount(account string) brightbox.Oauth2 {
	return &accountAuth{auth: a, account: account}
}

type accountAuth struct {
	*auth
	account string
}

// Client implements brightbox.Oauth2: the framework's client with the
// token added by this auth.
func (a *accountAuth) Client(ctx context.Context) (*http.Client, oauth2.TokenSource, error) {
	hc := *a.hc
	hc.Transport = &bearer{auth: a.auth, next: a.hc.Transport}
	return &hc, tokenSource{a: a.auth, ctx: context.WithoutCancel(ctx)}, nil
}

// APIURL implements brightbox.Oauth2.
func (a *accountAuth) APIURL() (*url.URL, error) {
	ep := endpoint.Config{BaseURL: a.base, Account: a.account}
	return ep.APIURL()
}

// tokenSource is the oauth2.TokenSource gobrightbox keeps (for
// Client.ExtractTokenID); a token it fetches is made with the values of
// the context given to brightbox.Connect.
type tokenSource struct {
	a   *auth
	ctx context.Context //nolint:containedctx // oauth2.TokenSource takes none
}

func (t tokenSource) Token() (*oauth2.Token, error) { return t.a.token(t.ctx, nil) }

// bearer adds the token to the requests for the API's host and, when the
// API refuses it, sends the request once more with a new one.
type bearer struct {
	auth *auth
	next http.RoundTripper
}

func (b *bearer) RoundTrip(req *http.Request) (*http.Response, error) {
	next := b.next
	if next == nil {
		next = http.DefaultTransport
	}
	if req.URL.Host != b.auth.host {
		return next.RoundTrip(req)
	}
	tok, err := b.auth.token(req.Context(), nil)
	if err != nil {
		closeBody(req)
		return nil, err
	}
	resp, err := next.RoundTrip(withToken(req, req.Body, tok))
	if err == nil && resp.StatusCode != http.StatusUnauthorized {
		b.auth.reauth.Accepted()
	}
	if err != nil || resp.StatusCode != http.StatusUnauthorized || (req.Body != nil && req.GetBody == nil) {
		return resp, err
	}
	// A 401 to a token we held valid: it expired early or was revoked.
	// The API did nothing with the request, so it is safe to send again.
	var body io.ReadCloser
	if req.GetBody != nil {
		if body, err = req.GetBody(); err != nil {
			return resp, nil
		}
	}
	drain(resp)
	if tok, err = b.auth.token(req.Context(), tok); err != nil {
		if body != nil {
			body.Close()
		}
		return nil, err
	}
	return next.RoundTrip(withToken(req, body, tok))
}

// withToken returns a copy of req with body and the token (a RoundTripper
// must not modify its request).
func withToken(req *http.Request, body io.ReadCloser, tok *oauth2.Token) *http.Request {
	r := req.Clone(req.Context())
	r.Body = body
	r.Header.Set("Authorization", "Bearer "+tok.AccessToken)
	return r
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}

func drain(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
}

// notFound is Brightbox's "no such resource": a 404 with the API's JSON
// error body, {"error_name":"...","errors":[...]}. The error_name strings
// are not documented, so any non-empty one counts; a body without it (a
// proxy's JSON, an OAuth error) does not.
var notFound = cloudapi.NotFoundRule{Condition: func(_ int, body []byte) bool {
	return hasErrorName(body)
}}

// hasErrorName reports whether body is an API error object with a
// non-empty error_name.
func hasErrorName(body []byte) bool {
	var e struct {
		ErrorName string `json:"error_name"`
	}
	return json.Unmarshal(body, &e) == nil && e.ErrorName != ""
}

// notFoundError marks the API's authoritative 404 for the one resource a
// call named.
type notFoundError struct{ err error }

func (e *notFoundError) Error() string { return e.err.Error() }
func (e *notFoundError) Unwrap() error { return e.err }

// One makes call, a request that named one resource (GET, PUT or DELETE
// /1.0/<collection>/<id>, an action on one resource), under the operation
// name op. gobrightbox's APIError keeps the body but not the headers, so
// the answer is recorded on the way: when it is the API's own 404, the
// error is marked so IsNotFound reports it.
func One[T any](ctx context.Context, op string, call func(context.Context) (T, error)) (T, error) {
	ctx, rec := cloudapi.RecordAnswers(cloudapi.WithOperation(ctx, op))
	v, err := call(ctx)
	if err != nil {
		if a, ok := rec.Last(); ok && isAPIError(err) && notFound.IsNotFound(cloudapi.OneResource, a) {
			return v, &notFoundError{err: err}
		}
	}
	return v, err
}

// IsNotFound reports whether err, from a call made with One, is the API's
// authoritative "does not exist" for the resource it named. Any other
// error, a 404 from a proxy or to a list included, is not.
func IsNotFound(err error) bool {
	var nf *notFoundError
	return errors.As(err, &nf)
}

// APIStatus is the HTTP status of an API error answer (gobrightbox's
// APIError), 0 for other errors.
func APIStatus(err error) int {
	var e *brightbox.APIError
	if errors.As(err, &e) {
		return e.StatusCode
	}
	return 0
}

func isAPIError(err error) bool {
	var e *brightbox.APIError
	return errors.As(err, &e)
}

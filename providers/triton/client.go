package triton

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/joyent/triton-go/account"
	"github.com/joyent/triton-go/client"
	"github.com/joyent/triton-go/compute"
	tritonerrors "github.com/joyent/triton-go/errors"
	"github.com/joyent/triton-go/network"

	"github.com/ccmkit/ccmkit/framework/cloudapi"
)

// This file builds the triton-go clients and holds the rules every call
// follows:
//
//   - every request goes through the framework's *http.Client (User-Agent,
//     rate limit, retries honouring Retry-After, metrics, logs with the
//     Authorization header redacted), signed by our own signer (signer.go);
//     redirects are not followed, as triton-go's own client does not;
//   - triton-go's client.Client writes its RequestHeader field after every
//     request, so one shared between goroutines is a data race: each call
//     gets its own copy of the base client (compute(), network(), account());
//   - only CloudAPI's own answer about the one resource a request named is
//     an authoritative not-found (see one and notFound): a 404 with
//     {"code":"ResourceNotFound"}, or a 410 Gone with the machine, state
//     "deleted". A 401, a 5xx, a timeout or a proxy's HTML 404 is an error,
//     so no Node is deleted on it.

// api is the CloudAPI clients and what Init learned about the account and
// datacenter.
type api struct {
	base *client.Client
	// accountID is the account's UUID (CNS names use it), login its name.
	accountID, login string
	// cnsEnabled is the account's triton_cns_enabled.
	cnsEnabled bool
	// datacenter is the datacenter's name (the zone).
	datacenter string

	nets networkCache
}

// compute returns a compute client for one call (or one goroutine).
func (a *api) compute() *compute.ComputeClient { return &compute.ComputeClient{Client: a.client()} }

// network returns a network client for one call (or one goroutine).
func (a *api) network() *network.NetworkClient { return &network.NetworkClient{Client: a.client()} }

// account returns an account client for one call (or one goroutine).
func (a *api) account() *account.AccountClient { return &account.AccountClient{Client: a.client()} }

// client is a copy of the base client: triton-go mutates its
// RequestHeader on every request.
func (a *api) client() *client.Client {
	c := *a.base
	c.RequestHeader = nil
	return &c
}

// connect builds the clients for cfg over hc and learns the account (its
// UUID, login and triton_cns_enabled) and the datacenter's name. Wrong
// credentials, a wrong URL or an unreachable CloudAPI fail here, named by
// their variable.
func connect(ctx context.Context, cfg *Config, hc *http.Client) (*api, error) {
	u, err := cfg.apiURL()
	if err != nil {
		return nil, err
	}
	s, err := newSigner(cfg)
	if err != nil {
		return nil, err
	}
	base, err := client.New(u.String(), "", cfg.Account, s)
	if err != nil {
		return nil, fmt.Errorf("building the CloudAPI client for %s (TRITON_URL): %w", cloudapi.RedactURL(u), err)
	}
	noRedirects := *hc
	noRedirects.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	base.HTTPClient = &noRedirects
	a := &api{base: base}
	a.nets.api = a
	if err := a.readAccount(ctx, cfg, u); err != nil {
		return nil, err
	}
	if a.datacenter, err = a.datacenterName(ctx, u); err != nil {
		return nil, err
	}
	return a, nil
}

// readAccount reads GET /<account>: the first signed request, so the one
// that tells whether CloudAPI takes the key.
func (a *api) readAccount(ctx context.Context, cfg *Config, u *url.URL) error {
	acc, err := a.account().Get(cloudapi.WithOperation(ctx, "account.get"), &account.GetInput{})
	if err != nil {
		return connectError(cfg, u, err)
	}
	if acc == nil || acc.ID == "" {
		return fmt.Errorf("reading account %s at %s: malformed response: no account id", cfg.Account, cloudapi.RedactURL(u))
	}
	a.accountID, a.login, a.cnsEnabled = acc.ID, acc.Login, acc.TritonCNSEnabled
	return nil
}

// connectError says which variables to check for what CloudAPI answered
// to the first request.
func connectError(cfg *Config, u *url.URL, err error) error {
	where := cloudapi.RedactURL(u)
	who := "account " + cfg.Account
	if cfg.User != "" {
		who = "user " + cfg.User + " of " + who
	}
	switch status := statusOf(err); {
	case status == http.StatusUnauthorized:
		return fmt.Errorf("TRITON_KEY_ID: CloudAPI at %s refused the key: is it a key of %s (TRITON_ACCOUNT, TRITON_USER, TRITON_KEY_MATERIAL)? %w", where, who, err)
	case status == http.StatusForbidden:
		return fmt.Errorf("TRITON_ACCOUNT: CloudAPI at %s does not let %s read account %s (TRITON_USER needs the role to): %w", where, who, cfg.Account, err)
	case status == http.StatusNotFound:
		return fmt.Errorf("TRITON_ACCOUNT: CloudAPI at %s has no account %s (or TRITON_URL is not CloudAPI): %w", where, cfg.Account, err)
	case status != 0:
		return fmt.Errorf("TRITON_URL: reading account %s at %s: %w", cfg.Account, where, err)
	}
	var badCert *tls.CertificateVerificationError
	if causeAs(err, &badCert) {
		return fmt.Errorf("TRITON_URL: CloudAPI at %s has a certificate this host does not trust (TRITON_SKIP_TLS_VERIFY turns the check off, for a test install only): %w", where, err)
	}
	return fmt.Errorf("TRITON_URL: CloudAPI at %s is unreachable: %w", where, err)
}

// datacenterName is the name of the datacenter TRITON_URL is the CloudAPI
// of: the Triton-Datacenter-Name header CloudAPI 9.2+ sends on /--ping,
// or else the ListDatacenters entry whose URL has TRITON_URL's host.
func (a *api) datacenterName(ctx context.Context, u *url.URL) (string, error) {
	resp, err := a.client().ExecuteRequestRaw(cloudapi.WithOperation(ctx, "ping"),
		client.RequestInput{Method: http.MethodGet, Path: "/--ping"})
	if err == nil {
		resp.Body.Close()
		if name := resp.Header.Get("Triton-Datacenter-Name"); name != "" {
			return name, nil
		}
	}
	dcs, err := a.compute().Datacenters().List(cloudapi.WithOperation(ctx, "datacenters.list"), &compute.ListDataCentersInput{})
	if err != nil {
		return "", fmt.Errorf("TRITON_URL: listing the datacenters at %s to learn the zone: %w", cloudapi.RedactURL(u), err)
	}
	for _, dc := range dcs {
		if du, err := url.Parse(dc.URL); err == nil && dc.Name != "" && strings.EqualFold(du.Host, u.Host) {
			return dc.Name, nil
		}
	}
	return "", fmt.Errorf("TRITON_URL: %s sends no Triton-Datacenter-Name header and is none of the account's datacenters: set it to one of their URLs", cloudapi.RedactURL(u))
}

// statusOf is the HTTP status of a CloudAPI error answer, 0 for an error
// without one (a connection refused, a timeout).
func statusOf(err error) int {
	if e := apiError(err); e != nil {
		return e.StatusCode
	}
	return 0
}

// apiError is the CloudAPI error answer in err's chain, or nil.
func apiError(err error) *tritonerrors.APIError {
	var e *tritonerrors.APIError
	if causeAs(err, &e) {
		return e
	}
	return nil
}

// causeAs is errors.As that also follows Cause: triton-go wraps its errors
// with github.com/pkg/errors v0.8, whose wrappers have Cause but not
// Unwrap.
func causeAs[T any](err error, target *T) bool {
	for range 16 { // a bound, in case a Cause returns its own error
		if errors.As(err, target) {
			return true
		}
		var c interface{ Cause() error }
		if !errors.As(err, &c) {
			return false
		}
		if err = c.Cause(); err == nil {
			return false
		}
	}
	return false
}

// notFoundRule is how CloudAPI says the resource a request named does not
// exist: 404 {"code":"ResourceNotFound"}, or, for a machine, 410 Gone with
// the machine, state "deleted", until its history is purged.
var notFoundRule = cloudapi.NotFoundRule{Statuses: []int{http.StatusNotFound, http.StatusGone},
	Condition: func(status int, body []byte) bool {
		if status == http.StatusGone {
			return cloudapi.FieldEquals("deleted", "state")(status, body)
		}
		return cloudapi.FieldEquals("ResourceNotFound", "code")(status, body)
	}}

// notFoundError marks CloudAPI's authoritative answer that the one
// resource a call named does not exist (any more).
type notFoundError struct{ err error }

func (e *notFoundError) Error() string { return e.err.Error() }
func (e *notFoundError) Unwrap() error { return e.err }

// one makes call, a request that named one resource (a machine, its tags,
// a network by ID), under the operation name op. triton-go's errors keep
// neither headers nor body, so the answer is recorded on the way: when it
// is CloudAPI's own not-found, the error is marked so notFound reports it.
func one[T any](ctx context.Context, op string, call func(context.Context) (T, error)) (T, error) {
	ctx, rec := cloudapi.RecordAnswers(cloudapi.WithOperation(ctx, op))
	v, err := guarded(op, func() (T, error) { return call(ctx) })
	if err != nil && statusOf(err) != 0 {
		if ans, ok := rec.Last(); ok && notFoundRule.IsNotFound(cloudapi.OneResource, ans) {
			return v, &notFoundError{err: err}
		}
	}
	return v, err
}

// guarded makes call, a triton-go request, and turns a panic in it into
// an error. triton-go decodes the triton.cns.* tags of every machine it
// reads with unchecked type assertions (compute.TagsExtractMeta): a
// machine whose triton.cns.disable is not a boolean would otherwise crash
// the CCM instead of failing one request.
func guarded[T any](op string, call func() (T, error)) (v T, err error) {
	defer func() {
		if r := recover(); r != nil {
			var zero T
			v, err = zero, fmt.Errorf("%s: malformed CloudAPI response (triton-go: %v)", op, r)
		}
	}()
	return call()
}

// notFound reports whether err, from a call made with one, is CloudAPI's
// authoritative "does not exist" (404 ResourceNotFound or 410 Gone) for
// the resource it named. Any other error, a 404 from a proxy or to a list
// included, is not.
func notFound(err error) bool {
	var nf *notFoundError
	return errors.As(err, &nf)
}

// networkCache holds the account's networks, read at most once per TTL
// (they change rarely; a NIC on an unknown network reads them again).
type networkCache struct {
	api *api

	mu   sync.Mutex
	at   time.Time
	nets map[string]*network.Network
}

// networkTTL is how long one network list serves; networkRefresh is how
// old it must be for a NIC on a network it lacks to read it again.
const (
	networkTTL     = 5 * time.Minute
	networkRefresh = 30 * time.Second
)

// networks returns the account's networks by ID, listed at most once per
// networkTTL, or networkRefresh when fresh is set (a NIC on a network the
// cached list lacks). An empty list is not kept: an account whose machines
// run sees their networks, so the next lookup asks again rather than find
// none for a TTL. Callers must not modify the result.
func (a *api) networks(ctx context.Context, fresh bool) (map[string]*network.Network, error) {
	c := &a.nets
	c.mu.Lock()
	defer c.mu.Unlock()
	ttl := networkTTL
	if fresh {
		ttl = networkRefresh
	}
	if c.nets != nil && time.Since(c.at) < ttl {
		return c.nets, nil
	}
	list, err := a.network().List(cloudapi.WithOperation(ctx, "networks.list"), &network.ListInput{})
	if err != nil {
		return nil, fmt.Errorf("listing networks: %w", err)
	}
	nets, err := networksByID(list)
	if err != nil {
		return nil, fmt.Errorf("listing networks: %w", err)
	}
	if len(nets) > 0 {
		c.nets, c.at = nets, time.Now()
	}
	return nets, nil
}

// forgetNetworks drops the cached network list: the next lookup lists
// them again.
func (a *api) forgetNetworks() {
	a.nets.mu.Lock()
	defer a.nets.mu.Unlock()
	a.nets.nets = nil
}

// networksByID indexes a network list by ID. A network whose ID is no UUID
// (CloudAPI's network UUID, which an appliance's create names) is a
// malformed response.
func networksByID(list []*network.Network) (map[string]*network.Network, error) {
	nets := make(map[string]*network.Network, len(list))
	for _, n := range list {
		switch {
		case n == nil:
			return nil, errors.New("malformed response: no network")
		case !uuidPattern.MatchString(n.Id):
			return nil, fmt.Errorf("malformed response: network ID %q", n.Id)
		}
		nets[n.Id] = n
	}
	return nets, nil
}

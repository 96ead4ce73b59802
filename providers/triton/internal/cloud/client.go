package cloud

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/joyent/triton-go/account"
	"github.com/joyent/triton-go/client"
	"github.com/joyent/triton-go/compute"
	"github.com/joyent/triton-go/network"

	"github.com/ccmkit/ccmkit/framework/cloudapi"
)

// This file builds the triton-go clients and holds the rules every call
// follows:
//
//   - every request goes through the caller's *http.Client (the
//     framework's cloudapi one: User-Agent, rate limit, retries honouring
//     Retry-After, metrics, logs with the Authorization header redacted),
//     signed by our own Signer (signer.go); redirects are not followed, as
//     triton-go's own client does not;
//   - triton-go's client.Client writes its RequestHeader field after every
//     request, so one shared between goroutines is a data race: each call
//     gets its own copy of the base client (Compute, Network, Account,
//     Base).

// Client is the CloudAPI clients and what Connect learned about the
// account and datacenter.
type Client struct {
	base *client.Client
	// AccountID is the account's UUID (CNS names use it), Login its name.
	AccountID, Login string
	// CNSEnabled is the account's triton_cns_enabled.
	CNSEnabled bool
	// Datacenter is the datacenter's name (the zone).
	Datacenter string
}

// Compute returns a compute client for one call (or one goroutine).
func (c *Client) Compute() *compute.ComputeClient { return &compute.ComputeClient{Client: c.Base()} }

// Network returns a network client for one call (or one goroutine).
func (c *Client) Network() *network.NetworkClient { return &network.NetworkClient{Client: c.Base()} }

// Account returns an account client for one call (or one goroutine).
func (c *Client) Account() *account.AccountClient { return &account.AccountClient{Client: c.Base()} }

// Base is a copy of the base client, for one request of triton-go's
// ExecuteRequest family: triton-go mutates its RequestHeader on every
// request.
func (c *Client) Base() *client.Client {
	b := *c.base
	b.RequestHeader = nil
	return &b
}

// URL is CloudAPI's URL (TRITON_URL), to log redacted.
func (c *Client) URL() *url.URL {
	u := c.base.TritonURL
	return &u
}

// AccountName is the account requests are made for (TRITON_ACCOUNT), the
// first element of their paths.
func (c *Client) AccountName() string { return c.base.AccountName }

// Signer is the signer of the client's requests, which holds the account
// key; false for a client built otherwise.
func (c *Client) Signer() (*Signer, bool) {
	if c == nil || c.base == nil || len(c.base.Authorizers) == 0 {
		return nil, false
	}
	s, ok := c.base.Authorizers[0].(*Signer)
	return s, ok
}

// Connect builds the clients for cr over hc and learns the account (its
// UUID, login and triton_cns_enabled) and the datacenter's name. Wrong
// credentials, a wrong URL or an unreachable CloudAPI fail here, named by
// their variable. cr's SDC_* names must be applied (ApplyLegacy).
func Connect(ctx context.Context, cr *Credentials, hc *http.Client) (*Client, error) {
	u, err := ParseURL(cr.URL)
	if err != nil {
		return nil, err
	}
	s, err := NewSigner(cr)
	if err != nil {
		return nil, err
	}
	base, err := client.New(u.String(), "", cr.Account, s)
	if err != nil {
		return nil, fmt.Errorf("building the CloudAPI client for %s (TRITON_URL): %w", cloudapi.RedactURL(u), err)
	}
	noRedirects := *hc
	noRedirects.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	base.HTTPClient = &noRedirects
	c := &Client{base: base}
	if err := c.readAccount(ctx, cr, u); err != nil {
		return nil, err
	}
	if c.Datacenter, err = c.datacenterName(ctx, u); err != nil {
		return nil, err
	}
	return c, nil
}

// readAccount reads GET /<account>: the first signed request, so the one
// that tells whether CloudAPI takes the key.
func (c *Client) readAccount(ctx context.Context, cr *Credentials, u *url.URL) error {
	acc, err := c.Account().Get(cloudapi.WithOperation(ctx, "account.get"), &account.GetInput{})
	if err != nil {
		return connectError(cr, u, err)
	}
	if acc == nil || acc.ID == "" {
		return fmt.Errorf("reading account %s at %s: malformed response: no account id", cr.Account, cloudapi.RedactURL(u))
	}
	c.AccountID, c.Login, c.CNSEnabled = acc.ID, acc.Login, acc.TritonCNSEnabled
	return nil
}

// connectError says which variables to check for what CloudAPI answered
// to the first request.
func connectError(cr *Credentials, u *url.URL, err error) error {
	where := cloudapi.RedactURL(u)
	who := "account " + cr.Account
	if cr.User != "" {
		who = "user " + cr.User + " of " + who
	}
	switch status := StatusOf(err); {
	case status == http.StatusUnauthorized:
		return fmt.Errorf("TRITON_KEY_ID: CloudAPI at %s refused the key: is it a key of %s (TRITON_ACCOUNT, TRITON_USER, TRITON_KEY_MATERIAL)? %w", where, who, err)
	case status == http.StatusForbidden:
		return fmt.Errorf("TRITON_ACCOUNT: CloudAPI at %s does not let %s read account %s (TRITON_USER needs the role to): %w", where, who, cr.Account, err)
	case status == http.StatusNotFound:
		return fmt.Errorf("TRITON_ACCOUNT: CloudAPI at %s has no account %s (or TRITON_URL is not CloudAPI): %w", where, cr.Account, err)
	case status != 0:
		return fmt.Errorf("TRITON_URL: reading account %s at %s: %w", cr.Account, where, err)
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
func (c *Client) datacenterName(ctx context.Context, u *url.URL) (string, error) {
	resp, err := c.Base().ExecuteRequestRaw(cloudapi.WithOperation(ctx, "ping"),
		client.RequestInput{Method: http.MethodGet, Path: "/--ping"})
	if err == nil {
		resp.Body.Close()
		if name := resp.Header.Get("Triton-Datacenter-Name"); name != "" {
			return name, nil
		}
	}
	dcs, err := c.Compute().Datacenters().List(cloudapi.WithOperation(ctx, "datacenters.list"), &compute.ListDataCentersInput{})
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

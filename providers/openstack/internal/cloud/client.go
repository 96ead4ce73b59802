package cloud

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/gophercloud/gophercloud/v2/pagination"

	"github.com/ccmkit/ccmkit/framework/cloudapi"
)

// ProviderName is the CCM's --cloud-provider value and providerID scheme,
// as OCCM wrote them (openstack.ProviderName), and the provider of both
// binaries' API requests in logs and metrics. It MUST NOT change: the
// providerID is immutable and every existing Node carries it.
const ProviderName = "openstack"

// This file builds the gophercloud clients and holds the rules every call
// follows:
//
//   - requests go through the framework's *http.Client (User-Agent, rate
//     limit, retries honouring Retry-After, metrics, logs with X-Auth-Token,
//     X-Subject-Token and the auth body redacted); gophercloud's own
//     RetryBackoffFunc stays off so nothing is retried twice;
//   - the token is re-requested once when an API answers 401
//     (keystoneAuth.reauth, gophercloud's ReauthFunc), so an expired or
//     revoked token heals without a restart, with the [Global]
//     credentials of the --cloud-config file as they are then (ConfWatch),
//     so a rotated Secret applies at the next token; while the APIs keep
//     refusing fresh tokens, re-authentication backs off (reauthGuard, on
//     cloudapi.ReauthBackoff), so a 401 storm costs Keystone a few token
//     requests, not one per API call;
//   - only an API's own 404 (a JSON body) for a request that named one
//     resource is an authoritative not-found (IsAPINotFound); a 401, a 5xx,
//     a timeout or a proxy's HTML 404 is an error, so no Node is deleted on
//     it.

// TLSConfig returns the TLS settings [Global] ca-file, cert-file, key-file
// and tls-insecure ask for, or nil for the defaults. Errors name the
// setting.
func TLSConfig(g *GlobalSection) (*tls.Config, error) {
	if g.CAFile == "" && g.CertFile == "" && !g.TLSInsecure {
		return nil, nil
	}
	tc := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: g.TLSInsecure} //nolint:gosec // operator's explicit choice
	if g.CAFile != "" {
		pem, err := os.ReadFile(g.CAFile)
		if err != nil {
			return nil, fmt.Errorf("[Global] ca-file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("[Global] ca-file: %s holds no PEM certificate", g.CAFile)
		}
		tc.RootCAs = pool
	}
	if g.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(g.CertFile, g.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("[Global] cert-file and key-file: %w", err)
		}
		tc.Certificates = []tls.Certificate{cert}
	}
	return tc, nil
}

// EndpointAvailability maps [Global] os-endpoint-type to a catalog
// interface; "" is public.
func EndpointAvailability(s string) (gophercloud.Availability, error) {
	switch strings.TrimSuffix(strings.ToLower(strings.TrimSpace(s)), "url") {
	case "", "public":
		return gophercloud.AvailabilityPublic, nil
	case "internal":
		return gophercloud.AvailabilityInternal, nil
	case "admin":
		return gophercloud.AvailabilityAdmin, nil
	}
	return "", fmt.Errorf("[Global] os-endpoint-type: %q is not public, internal or admin", s)
}

// CheckCompute makes the cheapest authenticated Nova call: one server.
func CheckCompute(ctx context.Context, compute *gophercloud.ServiceClient) error {
	ctx = cloudapi.WithOperation(ctx, "servers.list")
	err := servers.List(compute, servers.ListOpts{Limit: 1}).EachPage(ctx, func(context.Context, pagination.Page) (bool, error) {
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("cannot use the compute (Nova) API at %s: %w", RedactedURL(compute.Endpoint), ServiceError(err))
	}
	return nil
}

// authOptions returns the Keystone v3 request for g, which Validate has
// checked. AllowReauth stays off: gophercloud's own re-authentication
// would keep these credentials for good; keystoneAuth.reauth requests
// each new token with the credentials as they are then.
func authOptions(g *GlobalSection) (gophercloud.AuthOptions, error) {
	reveal := func(key string, s interface{ Reveal() (string, error) }) (string, error) {
		v, err := s.Reveal()
		if err != nil {
			return "", fmt.Errorf("[Global] %s: %w", key, err)
		}
		return v, nil
	}
	ao := gophercloud.AuthOptions{
		IdentityEndpoint: g.AuthURL,
		UserID:           g.UserID,
		Username:         g.Username,
		DomainID:         FirstOf(g.UserDomainID, g.DomainID),
	}
	if ao.DomainID == "" {
		ao.DomainName = FirstOf(g.UserDomainName, g.DomainName)
	}
	var err error
	switch g.authMethod() {
	case authApplicationCredential:
		ao.ApplicationCredentialID = g.ApplicationCredentialID
		ao.ApplicationCredentialName = g.ApplicationCredentialName
		if ao.ApplicationCredentialSecret, err = reveal("application-credential-secret", &g.ApplicationCredentialSecret); err != nil {
			return ao, err
		}
		if ao.ApplicationCredentialID != "" { // the ID alone identifies it
			ao.UserID, ao.Username, ao.DomainID, ao.DomainName = "", "", "", ""
		}
		return ao, nil // an application credential is scoped already
	case authTrust:
		ao.UserID, ao.Username, ao.DomainID, ao.DomainName = FirstOf(g.TrusteeID, g.UserID), "", "", ""
		secret, key := &g.TrusteePassword, "trustee-password"
		if secret.IsZero() {
			secret, key = &g.Password, "password"
		}
		if ao.Password, err = reveal(key, secret); err != nil {
			return ao, err
		}
		ao.Scope = &gophercloud.AuthScope{TrustID: g.TrustID}
		return ao, nil
	}
	if ao.UserID != "" {
		ao.Username, ao.DomainID, ao.DomainName = "", "", ""
	}
	if ao.Password, err = reveal("password", &g.Password); err != nil {
		return ao, err
	}
	switch {
	case g.TenantID != "":
		ao.Scope = &gophercloud.AuthScope{ProjectID: g.TenantID}
	case g.TenantName != "":
		ao.Scope = &gophercloud.AuthScope{ProjectName: g.TenantName, DomainID: FirstOf(g.TenantDomainID, g.DomainID)}
		if ao.Scope.DomainID == "" {
			ao.Scope.DomainName = FirstOf(g.TenantDomainName, g.DomainName)
		}
	}
	// Without a project Keystone scopes the token to the user's default
	// project, as OCCM relies on too.
	return ao, nil
}

// FirstOf is the first of values that is not empty, "" if none is.
func FirstOf(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}

// RedactedURL is s without its credentials (cloudapi.RedactURL), or
// cloudapi.Redacted when s does not parse: a URL for an error or a log.
func RedactedURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return cloudapi.Redacted
	}
	return cloudapi.RedactURL(u)
}

// ServiceError describes a failed API call: the status and the API's
// message, without the rest of the body. For a 401 after which no new
// token could be had, it adds why (keystoneAuth.reauth's error).
func ServiceError(err error) error {
	var reauth *gophercloud.ErrUnableToReauthenticate
	if errors.As(err, &reauth) && reauth.ErrOriginal != nil && reauth.ErrReauth != nil {
		return fmt.Errorf("%w; requesting a new Keystone token failed: %w", ServiceError(reauth.ErrOriginal), reauth.ErrReauth)
	}
	var code gophercloud.ErrUnexpectedResponseCode
	if !errors.As(err, &code) {
		return err
	}
	msg := apiMessage(code.Body)
	if msg == "" {
		msg = http.StatusText(code.Actual)
	}
	return &APIError{Status: code.Actual, Method: code.Method, URL: RedactedURL(code.URL), Message: msg, notFound: IsAPINotFound(err)}
}

// APIError is a non-success answer of an OpenStack API.
type APIError struct {
	Status      int
	Method, URL string
	Message     string
	notFound    bool
}

func (e *APIError) Error() string {
	return fmt.Sprintf("%s %s: %d %s", e.Method, e.URL, e.Status, e.Message)
}

// notFound is OpenStack's "no such resource": a 404 whose JSON body is
// one of the services' error objects, Nova's {"itemNotFound":{...}},
// Neutron's {"NeutronError":{...}}, Keystone's {"error":{...}} or
// Octavia's {"faultcode":...,"faultstring":...}. The services' 404s carry
// no finer code to check.
var notFound = cloudapi.NotFoundRule{Condition: isErrorObject}

// isErrorObject reports whether body, a JSON object, has the shape of an
// OpenStack error: a "faultstring" (Octavia, WSME) or one key holding an
// object (Nova, Neutron, Keystone).
func isErrorObject(_ int, body []byte) bool {
	var fault struct {
		FaultString *string `json:"faultstring"`
	}
	if json.Unmarshal(body, &fault) == nil && fault.FaultString != nil {
		return true
	}
	var wrapped map[string]map[string]json.RawMessage
	if json.Unmarshal(body, &wrapped) != nil || len(wrapped) != 1 {
		return false
	}
	for _, inner := range wrapped {
		if inner == nil { // {"itemNotFound": null}
			return false
		}
	}
	return true
}

// IsAPINotFound reports whether err is an API's own 404 for the one
// resource a request named (see notFound and cloudapi.NotFoundRule). A 404
// page from a proxy or a wrong path is HTML or text and does not count.
// Callers use it only for requests that named one resource.
func IsAPINotFound(err error) bool {
	var a *APIError
	if errors.As(err, &a) {
		return a.notFound
	}
	var code gophercloud.ErrUnexpectedResponseCode
	return errors.As(err, &code) && notFound.IsNotFound(cloudapi.OneResource,
		cloudapi.Answer{Status: code.Actual, Header: code.ResponseHeader, Body: code.Body})
}

// apiMessage extracts the message of an OpenStack error body, such as
// {"itemNotFound": {"message": "..."}} or {"NeutronError": {"message": "..."}}.
func apiMessage(body []byte) string {
	var outer map[string]json.RawMessage
	if json.Unmarshal(body, &outer) != nil {
		return ""
	}
	for _, v := range outer {
		var inner struct {
			Message string `json:"message"`
		}
		if json.Unmarshal(v, &inner) == nil && inner.Message != "" {
			return inner.Message
		}
	}
	var flat struct {
		Message     string `json:"message"`
		FaultString string `json:"faultstring"`
	}
	if json.Unmarshal(body, &flat) == nil {
		return FirstOf(flat.Message, flat.FaultString)
	}
	return ""
}

package gbsim

import (
	"bytes"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// The account OtherAccountServer serves, and its API client.
const (
	// OtherAccountID is the other account's ID.
	OtherAccountID = "acc-other"
	// OtherClientID and OtherClientSecret are the other account's API
	// client (client_credentials grant).
	OtherClientID     = "cli-other"
	OtherClientSecret = "gbsim-other-client-secret" //nolint:gosec // the simulator's test credential
	// OtherServerName is the name of the other account's one server.
	OtherServerName = "other-account-0"
)

// otherNumbering is where the other account's counters start: half-way
// through the five base-36 characters of an ID (newID steps through all
// 36^5 of them, one seq after another, so the two accounts' IDs never
// meet before either has made thirty million), at 10.248.0.2 for its
// servers' private IPv4 addresses, and in the upper half of the cloud IP
// range (109.107.48.0). Brightbox's IDs are unique across accounts: an ID
// of this account names nothing in the other.
var otherNumbering = numbering{seq: 36 * 36 * 36 * 36 * 36 / 2, serverSeq: 1 << 19, cipSeq: 4096}

// OtherAccountServer serves, on this server's URL, another Brightbox
// account (OtherAccountID) with an API client of its own (OtherClientID,
// OtherClientSecret), which this account's token endpoint does not know,
// and one active server, OtherServerName, whose IDs and addresses are
// drawn from a range of their own. The other client's credentials are
// valid, so the API answers them as Brightbox answers a client of another
// account: GET /1.0/accounts lists only the other account, server lists
// hold only its server, this account's servers are 404 missing_resource,
// and account_id=<this account> is 403. The first call creates the
// account; later ones return it. It is the returned Server's to change
// (AddServer...), not to Start: it is served here.
//
// Requests go to the other account when they are token requests (POST
// /token/ or /token) whose client, in HTTP Basic or in client_id, is
// OtherClientID, or carry a bearer token the other account issued; every
// other request, unauthenticated ones included, is this account's. The
// other account has no user: a password grant is this account's.
func (s *Server) OtherAccountServer() *Server {
	s.otherOnce.Do(func() {
		o := newServer(Options{
			Common:  simkit.Common{SettleAfter: s.opts.SettleAfter},
			Account: OtherAccountID, ClientID: OtherClientID, ClientSecret: OtherClientSecret,
			TokenTTL: s.opts.TokenTTL, Now: s.opts.Now,
			ProvisioningReads: s.opts.ProvisioningReads, MappingReads: s.opts.MappingReads,
			CloudIPsLimit: s.opts.CloudIPsLimit, LoadBalancersLimit: s.opts.LoadBalancersLimit,
			DeletedReads: s.opts.DeletedReads, VolumesPerServer: s.opts.VolumesPerServer,
			BlockStorageLimit: s.opts.BlockStorageLimit,
		}, otherNumbering)
		o.AddServer(CloudServer{Name: OtherServerName})
		s.AddAccount(o.claims, o.Handler())
		s.other.Store(o)
	})
	return s.other.Load()
}

// claims reports whether r is a request of s's account, served beside
// another's on one URL: a token request by s's API client, or an API
// request with a bearer token s issued (an expired one too, for s to
// refuse).
func (s *Server) claims(r *http.Request) bool {
	if r.Method == http.MethodPost && (r.URL.Path == "/token/" || r.URL.Path == "/token") {
		return tokenClient(r) == s.opts.ClientID
	}
	_, err := s.oauth.Check(r)
	return err == nil || errors.Is(err, simkit.ErrExpiredToken)
}

// tokenClient is the client ID of a token request, from HTTP Basic (its
// ID form-encoded, RFC 6749 §2.3.1) or the form's client_id; "" when it
// names none. It reads the body and puts it back for the token endpoint.
func tokenClient(r *http.Request) string {
	if id, _, ok := r.BasicAuth(); ok {
		if id, err := url.QueryUnescape(id); err == nil {
			return id
		}
		return ""
	}
	if r.Body == nil {
		return ""
	}
	b, err := io.ReadAll(r.Body)
	_ = r.Body.Close()
	r.Body = io.NopCloser(bytes.NewReader(b))
	if ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || ct != "application/x-www-form-urlencoded" {
		return ""
	}
	form, err := url.ParseQuery(string(b))
	if err != nil {
		return ""
	}
	return form.Get("client_id")
}

package tritonsim

import (
	_ "embed"
	"net/http"
	"net/netip"
	"regexp"
	"strings"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// The account OtherAccountServer serves.
const (
	// OtherAccountLogin is the other account's login.
	OtherAccountLogin = "ccmkit-other"
	// OtherMachineName is the name of the other account's one machine.
	OtherMachineName = "other-account-0"
)

// otherKeyPEM is the other account's key: fixed, as the account key is
// (defaultKeyPEM), so no test waits for a 2048-bit key.
//
//go:embed other_account_key.pem
var otherKeyPEM []byte

// otherNumbering is where the other account's counters start: its UUIDs
// hash sequence numbers from a billion on (the first account's start at
// one), its MACs from 90:b8:d0:80:00:01, and its public addresses from
// 198.19.0.10, the upper half of the public network. Triton's UUIDs are
// unique across accounts: an ID of this account names nothing in the
// other.
var otherNumbering = numbering{seq: 1_000_000_000, macSeq: 1 << 23, publicIP: netip.MustParseAddr("198.19.0.10")}

// OtherAccountServer serves, on this server's URL, another Triton account
// (OtherAccountLogin, with a UUID of its own) whose key, a fixed RSA key
// other than this account's, this account does not hold, with the
// datacenter's networks, packages and images under IDs of its own and one
// running machine, OtherMachineName. The other account's key is valid, so
// CloudAPI answers its requests as Triton answers another account's:
// /<other>/machines holds only its machine, this account's machines are
// 404 ResourceNotFound under its path, and this account's path is 403
// NotAuthorized. The first call creates the account; later ones return
// it. It is the returned Server's to change (AddMachine...), not to
// Start: it is served here (its CMON is not).
//
// Requests go to the other account when their HTTP Signature's keyId
// names it (/<other>/keys/... or /<other>/users/<user>/keys/...), whatever
// path they are for; every other request, unsigned ones included, is
// this account's, which answers one for the other account's path 401 or
// 403 as CloudAPI does.
func (s *Server) OtherAccountServer() *Server {
	s.otherOnce.Do(func() {
		opts := s.opts
		o := newServer(Options{
			Common:  simkit.Common{Seed: opts.Seed, SettleAfter: opts.SettleAfter},
			Account: OtherAccountLogin, Datacenter: opts.Datacenter,
			CNSPublicZone: opts.CNSPublicZone, CNSPrivateZone: opts.CNSPrivateZone,
			NoLoadBalancerImage: opts.NoLoadBalancerImage, PrivateKeyPEM: otherKeyPEM,
			ProvisioningReads: opts.ProvisioningReads, GoneReads: opts.GoneReads, ComputeNodes: opts.ComputeNodes,
			MaxClockSkew: opts.MaxClockSkew, Now: opts.Now,
			NoVolumes: opts.NoVolumes, VolumeSizes: opts.VolumeSizes,
		}, otherNumbering)
		o.st.vols.exports = s.exports() // one NFS export directory for both
		o.AddMachine(Machine{Name: OtherMachineName})
		s.AddAccount(func(r *http.Request) bool { return signatureAccount(r) == o.Account() }, o.Handler())
		s.mu.Lock()
		s.other = o
		s.mu.Unlock()
	})
	return s.other
}

// keyIDAccount is the account of an HTTP Signature's keyId.
var keyIDAccount = regexp.MustCompile(`keyId="/([^/"]+)/`)

// signatureAccount is the account whose key (its own or a sub-user's)
// r's Authorization: Signature names, "" when it names none. The
// signature is the account's server's to verify.
func signatureAccount(r *http.Request) string {
	params, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Signature ")
	if !ok {
		return ""
	}
	m := keyIDAccount.FindStringSubmatch(params)
	if m == nil {
		return ""
	}
	return m[1]
}

// otherIfMade is the other account's Server, nil before
// OtherAccountServer made it.
func (s *Server) otherIfMade() *Server {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.other
}

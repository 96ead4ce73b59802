package ranchersim

import (
	"net/http"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// The other environment's settings: OtherEnvironment serves them.
const (
	// OtherProject is the other environment's ID: its API is served under
	// /v2-beta/projects/1a900001, so its CATTLE_URL differs from this
	// environment's.
	OtherProject = "1a900001"
	// OtherAccessKey and OtherSecretKey are the other environment's API
	// key.
	OtherAccessKey = "8F2E6B1C4A9D3E7F0A5B"
	OtherSecretKey = "ranchersim-other-environment-secret-Qz4nV8cX2"
)

// otherEnvironmentIDs is the database ID the other environment's
// resources start after: Cattle's IDs (1h<n>, 1ia<n>, 1s<n>...) are
// database IDs, unique across the environments of a Rancher server, so an
// ID (and the uuid derived from it) of this environment names nothing in
// the other.
const otherEnvironmentIDs = 900_000

// OtherEnvironment serves, on this server's URL, another environment
// (project) of the same Rancher server: OtherProject, with an
// environment API key of its own (OtherAccessKey, OtherSecretKey), which
// this environment's API does not accept, and one active host,
// "other-env-0". A request whose HTTP Basic access key is OtherAccessKey
// goes to it; every other one to this environment. The key is valid, and
// scoped to its environment as an environment API key is: Cattle answers
// it with the other environment's resources only, so a list of hosts
// (the provider's lookup of a host by uuid is a list filtered on uuid)
// holds none of this environment's, a GET of one of this environment's
// hosts by ID is 404 Not Found (go-rancher's ById: nil, nil), and this
// environment's project URL is 404. The first call creates the
// environment; later ones return it.
func (s *Server) OtherEnvironment() *Server {
	s.otherOnce.Do(func() {
		o := New(Options{
			Common:  simkit.Common{SettleAfter: s.opts.SettleAfter},
			Project: OtherProject, AccessKey: OtherAccessKey, SecretKey: OtherSecretKey,
			LBImage: s.opts.LBImage, ProvisioningReads: s.opts.ProvisioningReads, Now: s.opts.Now,
		})
		for _, prefix := range []string{prefixHost, prefixIPAddress, prefixStack, prefixService, prefixCertificate,
			prefixVolume, prefixStorageDriver, prefixStoragePool, prefixMount} {
			o.st.seq[prefix] = otherEnvironmentIDs
		}
		o.AddHost(Host{Hostname: "other-env-0", AgentIPAddress: "10.9.0.10",
			IPAddresses: []IPAddress{{Address: "10.9.0.10"}, {Address: "198.51.100.10"}}})
		s.AddAccount(func(r *http.Request) bool {
			user, _, found := r.BasicAuth()
			return found && user == OtherAccessKey
		}, o.Handler())
		s.other = o
	})
	return s.other
}

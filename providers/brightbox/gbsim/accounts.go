package gbsim

import (
	"net/http"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// accountJSON is the account as GET /1.0/accounts serves it: the fields
// of gobrightbox's testdata that say what the account holds.
type accountJSON struct {
	accountLite
	CreatedAt          string `json:"created_at"`
	RAMLimit           int    `json:"ram_limit"`
	RAMUsed            int    `json:"ram_used"`
	CloudIPsLimit      int    `json:"cloud_ips_limit"`
	CloudIPsUsed       int    `json:"cloud_ips_used"`
	LoadBalancersLimit int    `json:"load_balancers_limit"`
	LoadBalancersUsed  int    `json:"load_balancers_used"`
	BlockStorageLimit  int    `json:"block_storage_limit"`
	BlockStorageUsed   int    `json:"block_storage_used"`
	ServersUsed        int    `json:"servers_used"`
	ValidCreditCard    bool   `json:"valid_credit_card"`
	TelephoneVerified  bool   `json:"telephone_verified"`
	CountryCode        string `json:"country_code"`
}

func (v view) accountJSON() accountJSON {
	a := accountJSON{accountLite: v.accountLite(), CreatedAt: "2011-10-01T00:00:00Z", RAMLimit: 1 << 20,
		CloudIPsLimit: v.st.opts.CloudIPsLimit, LoadBalancersLimit: v.st.opts.LoadBalancersLimit,
		BlockStorageLimit: v.st.opts.BlockStorageLimit, BlockStorageUsed: v.st.storageUsed(),
		ValidCreditCard: true, TelephoneVerified: true, CountryCode: "GB"}
	for _, srv := range v.st.servers.All() {
		if srv.Status != StatusDeleted {
			a.ServersUsed++
			t, _ := findServerType(srv.Type)
			a.RAMUsed += t.RAM
		}
	}
	a.CloudIPsUsed, a.LoadBalancersUsed = v.st.used()
	return a
}

// used counts the cloud IPs and the load balancers not deleted, as the
// account's limits do.
func (st *state) used() (cloudIPs, loadBalancers int) {
	for _, lb := range st.lbs.All() {
		if lb.Status != StatusDeleted {
			loadBalancers++
		}
	}
	return st.cips.Len(), loadBalancers
}

// limitReached is the API's answer to a create beyond the account's
// limit (gobrightbox's testdata/api_error_forbidden.json).
func limitReached(what string, limit int) simkit.Response {
	return fail(http.StatusForbidden, "Account limit reached: %d %s", limit, what)
}

// listAccounts serves GET /1.0/accounts: the one account the credentials
// reach.
func (s *Server) listAccounts(r *http.Request) simkit.Response {
	return ok([]accountJSON{s.view(r).accountJSON()})
}

func (s *Server) getAccount(r *http.Request) simkit.Response {
	if r.PathValue("id") != s.opts.Account {
		return notFound()
	}
	return ok(s.view(r).accountJSON())
}

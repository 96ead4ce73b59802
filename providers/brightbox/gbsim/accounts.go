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
	ServersUsed        int    `json:"servers_used"`
	ValidCreditCard    bool   `json:"valid_credit_card"`
	TelephoneVerified  bool   `json:"telephone_verified"`
	CountryCode        string `json:"country_code"`
}

func (v view) accountJSON() accountJSON {
	a := accountJSON{accountLite: v.accountLite(), CreatedAt: "2011-10-01T00:00:00Z", RAMLimit: 1 << 20,
		CloudIPsLimit: 1000, LoadBalancersLimit: 1000, ValidCreditCard: true, TelephoneVerified: true, CountryCode: "GB"}
	for _, srv := range v.st.servers.all() {
		if srv.Status != StatusDeleted {
			a.ServersUsed++
			t, _ := findServerType(srv.Type)
			a.RAMUsed += t.RAM
		}
	}
	a.CloudIPsUsed = len(v.st.cips.order)
	for _, lb := range v.st.lbs.all() {
		if lb.Status != StatusDeleted {
			a.LoadBalancersUsed++
		}
	}
	return a
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

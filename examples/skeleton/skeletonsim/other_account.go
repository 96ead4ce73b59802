package skeletonsim

import (
	"net/http"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// OtherAccountToken is the API token of the account OtherAccount serves.
const OtherAccountToken = "skeleton-other-account-token"

// OtherAccount serves, on this server's URL (simkit.Base.AddAccount),
// another Skeleton Cloud account: a token of its own, which this
// account's API does not accept, and one instance, "other-account-0",
// whose ID ("i-900001") no instance of this account gets (a cloud's IDs
// are unique across its accounts). Its token is valid, so the API answers
// it as a cloud answers a credential of the wrong account: lists without
// this account's instances, and 404 for them. The first call creates the
// account; later ones return it.
func (s *Server) OtherAccount() *Server {
	s.otherOnce.Do(func() {
		o := New(Options{Token: OtherAccountToken, PerPage: s.opts.PerPage, ProvisioningReads: s.opts.ProvisioningReads,
			Common: simkit.Common{SettleAfter: s.opts.SettleAfter}})
		o.LaunchInstance(Instance{ID: "i-900001", Name: "other-account-0"})
		s.AddAccount(func(r *http.Request) bool { return simkit.HasBearer(r, o.Token()) }, o.Handler())
		s.other = o
	})
	return s.other
}

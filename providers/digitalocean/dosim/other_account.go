package dosim

import (
	"net/http"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// OtherTeamToken is the API token of the team OtherTeam serves.
const OtherTeamToken = "do-other-team-token"

// otherTeamIDs is where the other team's droplet IDs start: DigitalOcean's
// IDs are unique across teams, so a droplet ID of this team names no
// droplet of the other.
const otherTeamIDs = 900_000_001

// OtherTeam serves, on this server's URL, another DigitalOcean team: a
// token of its own (OtherTeamToken), which this team's API does not
// accept, and one droplet, "other-team-0". A token of the other team is
// valid, so the API answers it as DigitalOcean answers a token of the
// wrong team: an empty droplet list, and 404 for this team's droplets.
// The first call creates the team; later ones return it.
func (s *Server) OtherTeam() *Server {
	s.otherOnce.Do(func() {
		o := New(Options{
			Common: simkit.Common{SettleAfter: s.opts.SettleAfter}, Token: OtherTeamToken, Region: s.opts.Region,
			PerPage: s.opts.PerPage, ProvisioningReads: s.opts.ProvisioningReads,
		})
		o.AddDroplet(Droplet{ID: otherTeamIDs, Name: "other-team-0"})
		s.AddAccount(func(r *http.Request) bool { return simkit.HasBearer(r, o.Token()) }, o.Handler())
		s.other = o
	})
	return s.other
}

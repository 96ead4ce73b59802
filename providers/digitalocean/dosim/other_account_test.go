package dosim

import (
	"net/http"
	"testing"

	"github.com/digitalocean/godo"
)

// TestOtherTeamSeesOnlyItsDroplets: godo with the other team's token, on
// the same URL, lists only that team's droplet and gets 404 for this
// team's; this team's token still sees only its own.
func TestOtherTeamSeesOnlyItsDroplets(t *testing.T) {
	s, mine := setup(t, Options{})
	d := s.AddDroplet(Droplet{Name: "node-0"})
	other := newClient(t, s, s.OtherTeam().Token(), 0)

	list, _, err := other.Droplets.List(t.Context(), &godo.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].Name != "other-team-0" {
		t.Errorf("the other team lists %+v, want only other-team-0", list)
	}
	_, _, err = other.Droplets.Get(t.Context(), d.ID)
	wantStatus(t, err, http.StatusNotFound)

	list, _, err = mine.Droplets.List(t.Context(), &godo.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].ID != d.ID {
		t.Errorf("this team lists %+v, want only node-0", list)
	}
	if _, _, err := mine.Droplets.Get(t.Context(), otherTeamIDs); err == nil {
		t.Error("this team's token reads the other team's droplet")
	}
}

package gbsim

import (
	"net/http"
	"slices"
	"testing"

	brightbox "github.com/brightbox/gobrightbox/v2"
)

func members(ids ...string) brightbox.ServerGroupMemberList {
	var l brightbox.ServerGroupMemberList
	for _, id := range ids {
		l.Servers = append(l.Servers, brightbox.ServerGroupMember{Server: id})
	}
	return l
}

// groupsOf are the IDs of the server groups the server says it is in.
func groupsOf(t *testing.T, c *brightbox.Client, id string) []string {
	t.Helper()
	srv, err := c.Server(ctx(), id)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, g := range srv.ServerGroups {
		out = append(out, g.ID)
	}
	return out
}

func TestServerGroups(t *testing.T) {
	s, c := setup(t, Options{})
	a, b := s.AddServer(CloudServer{Name: "a"}), s.AddServer(CloudServer{Name: "b"})
	g, err := c.CreateServerGroup(ctx(), brightbox.ServerGroupOptions{Name: ptr("web.default.kubernetes"), Description: ptr("web")})
	if err != nil {
		t.Fatal(err)
	}
	if g.Name != "web.default.kubernetes" || g.Description != "web" || len(g.Servers) != 0 {
		t.Fatalf("created = %+v", g)
	}
	g, err = c.AddServersToServerGroup(ctx(), g.ID, members(a.ID, b.ID))
	if err != nil || len(g.Servers) != 2 {
		t.Fatalf("added = %+v, %v", g, err)
	}
	if got := groupsOf(t, c, a.ID); !slices.Contains(got, g.ID) {
		t.Errorf("server a's groups = %v, want %s among them", got, g.ID)
	}
	_, err = c.AddServersToServerGroup(ctx(), g.ID, members(a.ID))
	wantStatus(t, err, http.StatusConflict)
	_, err = c.AddServersToServerGroup(ctx(), g.ID, members("srv-nope0"))
	wantStatus(t, err, http.StatusUnprocessableEntity)

	other, err := c.CreateServerGroup(ctx(), brightbox.ServerGroupOptions{Name: ptr("other")})
	if err != nil {
		t.Fatal(err)
	}
	moved, err := c.MoveServersToServerGroup(ctx(), g.ID, other.ID, members(b.ID))
	if err != nil || moved.ID != other.ID || len(moved.Servers) != 1 {
		t.Fatalf("moved = %+v, %v", moved, err)
	}
	if got := groupsOf(t, c, b.ID); slices.Contains(got, g.ID) || !slices.Contains(got, other.ID) {
		t.Errorf("server b's groups after the move = %v", got)
	}
	g, err = c.RemoveServersFromServerGroup(ctx(), g.ID, members(a.ID))
	if err != nil || len(g.Servers) != 0 {
		t.Fatalf("removed = %+v, %v", g, err)
	}
	_, err = c.RemoveServersFromServerGroup(ctx(), g.ID, members(a.ID))
	wantStatus(t, err, http.StatusConflict)

	if _, err := c.DestroyServerGroup(ctx(), other.ID); err != nil {
		t.Fatal(err)
	}
	if got := groupsOf(t, c, b.ID); slices.Contains(got, other.ID) {
		t.Errorf("server b's groups after the group's deletion = %v", got)
	}
	_, err = c.DestroyServerGroup(ctx(), "grp-sda44")
	wantStatus(t, err, http.StatusConflict)
	_, err = c.ServerGroup(ctx(), other.ID)
	wantStatus(t, err, http.StatusNotFound)
}

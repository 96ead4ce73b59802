package openstacksim

import (
	"net/http"
	"testing"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/projects"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/users"
)

func TestKeystoneListsForAMember(t *testing.T) {
	s, c := setup(t, Options{})
	identity, err := openstack.NewIdentityV3(c.provider, gophercloud.EndpointOpts{Region: s.Region()})
	if err != nil {
		t.Fatal(err)
	}
	// Listing every project is an admin's: 403, so clients fall back to
	// the user's own projects.
	_, err = projects.List(identity, nil).AllPages(ctx())
	wantCode(t, err, http.StatusForbidden)
	_, err = users.List(identity, nil).AllPages(ctx())
	wantCode(t, err, http.StatusForbidden)

	u := s.opts.Users[0]
	pages, err := users.ListProjects(identity, u.ID).AllPages(ctx())
	if err != nil {
		t.Fatal(err)
	}
	list, err := projects.ExtractProjects(pages)
	if err != nil || len(list) != 1 || list[0].ID != u.ProjectID || list[0].Name != DefaultProject {
		t.Errorf("own projects = %+v, %v", list, err)
	}
	_, err = users.ListProjects(identity, "someone-else").AllPages(ctx())
	wantCode(t, err, http.StatusForbidden)
	pages, err = projects.ListAvailable(identity).AllPages(ctx())
	if list, _ := projects.ExtractProjects(pages); err != nil || len(list) != 1 {
		t.Errorf("auth/projects = %+v, %v", list, err)
	}
}

package openstacksim

import (
	"net/http"
	"testing"

	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/availabilityzones"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/limits"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/quotasets"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/quotas"
)

func TestQuotasAndLimitsOfTheOwnProject(t *testing.T) {
	s, c := setup(t, Options{})
	s.AddServer(NovaServer{Name: "a", Flavor: "m1.medium"})
	s.AddServer(NovaServer{Name: "b", Flavor: "m1.large"})
	project := s.opts.Users[0].ProjectID

	qs, err := quotasets.GetDetail(ctx(), c.compute, project).Extract()
	if err != nil || qs.Instances.InUse != 2 || qs.Instances.Limit != 10 || qs.Cores.InUse != 6 || qs.RAM.InUse != 12288 {
		t.Errorf("quota detail = %+v, %v", qs, err)
	}
	_, err = quotasets.Get(ctx(), c.compute, "another-project").Extract()
	wantForbidden(t, err, "os_compute_api:os-quota-sets:show")
	lim, err := limits.Get(ctx(), c.compute, nil).Extract()
	if err != nil || lim.Absolute.TotalInstancesUsed != 2 || lim.Absolute.MaxTotalCores != 20 {
		t.Errorf("limits = %+v, %v", lim, err)
	}

	nq, err := quotas.GetDetail(ctx(), c.network, project).Extract()
	if err != nil || nq.Network.Used != 2 || nq.Network.Limit != 100 {
		t.Errorf("network quota detail = %+v, %v", nq, err)
	}
	_, err = quotas.Get(ctx(), c.network, "another-project").Extract()
	wantCode(t, err, http.StatusNotFound)

	// The detailed zone list is an admin's, the plain one anyone's: a
	// client falls back from the 403.
	_, err = availabilityzones.ListDetail(c.compute).AllPages(ctx())
	wantForbidden(t, err, "os_compute_api:os-availability-zone:detail")
	if _, err := availabilityzones.List(c.compute).AllPages(ctx()); err != nil {
		t.Error(err)
	}
}

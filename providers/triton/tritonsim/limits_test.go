package tritonsim

import (
	"net/http"
	"testing"

	"github.com/joyent/triton-go/compute"
)

// TestLimits: GET /:login/limits answers the provisioning limits with
// what the account's machines use (sdc-cloudapi docs/index.md
// "GetAccountLimits"; plugins/provision_limits.js setLimitsUsed: a count,
// RAM in MiB, disk in GiB), an empty list when the plugin is off; a
// create that would go over a limit is 403 NotAuthorized "Quota exceeded"
// (allowProvision).
func TestLimits(t *testing.T) {
	_, c := setup(t, Options{})
	var none []Limit
	if _, err := call(t, c, http.MethodGet, "/"+DefaultAccount+"/limits", nil, &none); err != nil || none == nil || len(none) != 0 {
		t.Fatalf("limits of an account without any: %v, %v", none, err)
	}

	s, c := setup(t, Options{Limits: []Limit{
		{By: "machines", Value: 2},
		{By: "ram", Value: 4096},
		{By: "quota", Value: 1000, Check: "image", Image: LoadBalancerImage},
	}})
	s.AddMachine(Machine{Package: "g4-highcpu-2G"})
	var got []Limit
	if _, err := call(t, c, http.MethodGet, "/my/limits", nil, &got); err != nil {
		t.Fatal(err)
	}
	want := []Limit{
		{By: "machines", Value: 2, Used: 1},
		{By: "ram", Value: 4096, Used: 2048},
		{By: "quota", Value: 1000, Used: 0, Check: "image", Image: LoadBalancerImage},
	}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Fatalf("limits %+v, want %+v", got, want)
	}

	img := imageID(t, c, "base-64-lts")
	_, err := c.compute.Instances().Create(ctx(), &compute.CreateInstanceInput{Package: "g4-highcpu-4G", Image: img})
	wantAPIError(t, err, http.StatusForbidden, "NotAuthorized")
	if _, err := c.compute.Instances().Create(ctx(), &compute.CreateInstanceInput{Package: "g4-highcpu-2G", Image: img}); err != nil {
		t.Fatalf("a create within the limits: %v", err)
	}
	_, err = c.compute.Instances().Create(ctx(), &compute.CreateInstanceInput{Package: "g4-highcpu-1G", Image: img})
	wantAPIError(t, err, http.StatusForbidden, "NotAuthorized")
	if n := len(s.Machines()); n != 2 {
		t.Fatalf("%d machines, want 2", n)
	}
}

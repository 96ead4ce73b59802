package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	rancher "github.com/rancher/go-rancher/v2"
)

// TestRunRancher serves the Rancher example: the printed environment is
// the old CCM's, and go-rancher with it reads the hosts and the load
// balancer the scenario seeds.
func TestRunRancher(t *testing.T) {
	cs := startRun(t, "--scenario=../../examples/cloudsim/rancher.yaml")
	u := cs.env["CLOUDSIM_URL"]
	wantEnv := map[string]string{
		"CLOUDSIM_URL":      u,
		"CLOUDSIM_PROVIDER": "rancher",
		"CATTLE_URL":        u + "/v2-beta/projects/1a5",
		"CATTLE_ACCESS_KEY": "5C1D0A4F1B6E7C9D2E3F",
		"CATTLE_SECRET_KEY": "cloudsim-secret",
	}
	if diff := cmp.Diff(wantEnv, cs.env); diff != "" {
		t.Fatalf("printed environment (-want +got):\n%s", diff)
	}
	c, err := rancher.NewRancherClient(&rancher.ClientOpts{Url: cs.env["CATTLE_URL"],
		AccessKey: cs.env["CATTLE_ACCESS_KEY"], SecretKey: cs.env["CATTLE_SECRET_KEY"]})
	if err != nil {
		t.Fatal(err)
	}
	hosts, err := c.Host.List(&rancher.ListOpts{Filters: map[string]any{"removed_null": "1"}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, h := range hosts.Data {
		got = append(got, h.Hostname+"/"+h.State)
	}
	if diff := cmp.Diff([]string{"worker-1/active", "worker-2/active", "worker-3/inactive"}, got); diff != "" {
		t.Errorf("hosts (-want +got):\n%s", diff)
	}
	lbs, err := c.LoadBalancerService.List(&rancher.ListOpts{Filters: map[string]any{"name_prefix": "lb-"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(lbs.Data) != 1 || lbs.Data[0].State != "active" || len(lbs.Data[0].PublicEndpoints) != 1 ||
		lbs.Data[0].PublicEndpoints[0].IpAddress != "10.0.0.11" {
		t.Errorf("load balancers = %+v", lbs.Data)
	}
}

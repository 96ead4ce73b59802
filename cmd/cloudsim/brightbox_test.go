package main

import (
	"encoding/json"
	"net/http"
	"net/url"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestRunBrightbox serves the Brightbox example: the printed environment
// is the existing CCM's, and its credentials get a token that reads the
// servers and the load balancer the scenario seeds.
func TestRunBrightbox(t *testing.T) {
	cs := startRun(t, "--scenario=../../examples/cloudsim/brightbox.yaml")
	u := cs.env["CLOUDSIM_URL"]
	wantEnv := map[string]string{
		"CLOUDSIM_URL":            u,
		"CLOUDSIM_PROVIDER":       "brightbox",
		"BRIGHTBOX_API_URL":       u,
		"BRIGHTBOX_CLIENT":        "cli-dsse2",
		"BRIGHTBOX_CLIENT_SECRET": "cloudsim-secret",
		"BRIGHTBOX_ACCOUNT":       "acc-43ks4",
	}
	if diff := cmp.Diff(wantEnv, cs.env); diff != "" {
		t.Fatalf("printed environment (-want +got):\n%s", diff)
	}

	resp, err := http.PostForm(u+"/token/", url.Values{"grant_type": {"client_credentials"},
		"client_id": {cs.env["BRIGHTBOX_CLIENT"]}, "client_secret": {cs.env["BRIGHTBOX_CLIENT_SECRET"]}})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&tok); err != nil || tok.AccessToken == "" {
		t.Fatalf("token: %s, %v", resp.Status, err)
	}

	var servers []struct{ Name, Status string }
	getJSON(t, u+"/1.0/servers?account_id=acc-43ks4", tok.AccessToken, &servers)
	want := []struct{ Name, Status string }{{"worker-1", "active"}, {"worker-2", "active"}, {"worker-3", "inactive"}}
	if diff := cmp.Diff(want, servers); diff != "" {
		t.Errorf("servers (-want +got):\n%s", diff)
	}
	var lbs []struct {
		Name     string
		CloudIPs []struct{ ID string } `json:"cloud_ips"`
	}
	getJSON(t, u+"/1.0/load_balancers", tok.AccessToken, &lbs)
	if len(lbs) != 1 || lbs[0].Name != "web.default.kubernetes" || len(lbs[0].CloudIPs) != 1 {
		t.Errorf("load balancers = %+v, want the existing CCM's with its cloud IP", lbs)
	}
}

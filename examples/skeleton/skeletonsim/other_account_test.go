package skeletonsim_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/ccmkit/ccmkit/examples/skeleton/skeletonsim"
)

// TestOtherAccountSeesOnlyItsInstances: the other account's token, on the
// same URL, lists only that account's instance and gets 404 for this
// account's; this account's token still lists only its own.
func TestOtherAccountSeesOnlyItsInstances(t *testing.T) {
	sim := skeletonsim.NewServer(t, skeletonsim.Options{})
	mine := sim.LaunchInstance(skeletonsim.Instance{Name: "node-0"})
	other := sim.OtherAccount()

	get := func(token, path string) (int, []string) {
		t.Helper()
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, sim.URL()+path, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var body struct {
			Instances []skeletonsim.Instance `json:"instances"`
		}
		_ = json.NewDecoder(resp.Body).Decode(&body)
		var names []string
		for _, i := range body.Instances {
			names = append(names, i.Name)
		}
		return resp.StatusCode, names
	}
	if status, names := get(other.Token(), "/v1/instances"); status != http.StatusOK || len(names) != 1 || names[0] != "other-account-0" {
		t.Errorf("the other account lists %d %v, want 200 [other-account-0]", status, names)
	}
	if status, _ := get(other.Token(), "/v1/instances/"+mine.ID); status != http.StatusNotFound {
		t.Errorf("the other account gets this account's instance: %d, want 404", status)
	}
	if status, names := get(sim.Token(), "/v1/instances"); status != http.StatusOK || len(names) != 1 || names[0] != "node-0" {
		t.Errorf("this account lists %d %v, want 200 [node-0]", status, names)
	}
}

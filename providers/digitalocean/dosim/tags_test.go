package dosim

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// rawCall sends body to the API as it goes on the wire and returns the
// status and the answer.
func rawCall(t *testing.T, s *Server, method, path, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, s.URL()+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+s.Token())
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// TestTagResourcesWire: tagging and untagging droplets takes the API's
// body, {"resources":[{"resource_id":"<id>","resource_type":"droplet"}]}
// (openapi tags/tag_resource.yml, untag_resource.yml), several at once,
// and answers 204 with no body; a tag that does not exist is 404.
func TestTagResourcesWire(t *testing.T) {
	s := NewServer(t, Options{})
	a, b := s.AddDroplet(Droplet{}).ID, s.AddDroplet(Droplet{}).ID
	body := fmt.Sprintf(`{"resources":[{"resource_id":"%d","resource_type":"droplet"},{"resource_id":"%d","resource_type":"droplet"}]}`, a, b)
	if code, _ := rawCall(t, s, http.MethodPost, "/v2/tags/lb-nodes/resources", body); code != http.StatusNotFound {
		t.Errorf("tagging with a tag that does not exist: %d, want 404", code)
	}
	if code, _ := rawCall(t, s, http.MethodPost, "/v2/tags", `{"name":"lb-nodes"}`); code != http.StatusCreated {
		t.Fatalf("creating the tag: %d", code)
	}
	if code, out := rawCall(t, s, http.MethodPost, "/v2/tags/lb-nodes/resources", body); code != http.StatusNoContent || out != "" {
		t.Fatalf("tagging: %d %q, want 204 and no body", code, out)
	}
	for _, d := range s.Droplets() {
		if !slices.Contains(d.Tags, "lb-nodes") {
			t.Errorf("droplet %d not tagged: %v", d.ID, d.Tags)
		}
	}
	one := fmt.Sprintf(`{"resources":[{"resource_id":"%d","resource_type":"droplet"}]}`, a)
	if code, out := rawCall(t, s, http.MethodDelete, "/v2/tags/lb-nodes/resources", one); code != http.StatusNoContent || out != "" {
		t.Fatalf("untagging: %d %q, want 204 and no body", code, out)
	}
	for _, d := range s.Droplets() {
		if slices.Contains(d.Tags, "lb-nodes") != (d.ID == b) {
			t.Errorf("after untagging %d: droplet %d has tags %v", a, d.ID, d.Tags)
		}
	}
}

// TestLoadBalancerTagAndDropletsWire: a load balancer request with both a
// tag and droplet_ids is refused, 422 unprocessable_entity, on create and
// on update, and changes nothing.
func TestLoadBalancerTagAndDropletsWire(t *testing.T) {
	s := NewServer(t, Options{})
	d := s.AddDroplet(Droplet{Tags: []string{"lb-nodes"}}).ID
	spec := func(targets string) string {
		return `{"name":"lb","region":"nyc3","forwarding_rules":[{"entry_protocol":"tcp","entry_port":80,"target_protocol":"tcp","target_port":30080}],` + targets + `}`
	}
	both := spec(fmt.Sprintf(`"tag":"lb-nodes","droplet_ids":[%d]`, d))
	code, out := rawCall(t, s, http.MethodPost, "/v2/load_balancers", both)
	var e struct{ ID, Message string }
	if err := json.Unmarshal([]byte(out), &e); code != http.StatusUnprocessableEntity || err != nil || e.ID != "unprocessable_entity" {
		t.Errorf("create with both: %d %s", code, out)
	}
	code, out = rawCall(t, s, http.MethodPost, "/v2/load_balancers", spec(`"tag":"lb-nodes"`))
	if code != http.StatusAccepted {
		t.Fatalf("create with the tag: %d %s", code, out)
	}
	id := s.LoadBalancers()[0].ID
	if code, out = rawCall(t, s, http.MethodPut, "/v2/load_balancers/"+id, both); code != http.StatusUnprocessableEntity {
		t.Errorf("update with both: %d %s", code, out)
	}
	if lbs := s.LoadBalancers(); len(lbs) != 1 || lbs[0].Tag != "lb-nodes" || !slices.Equal(lbs[0].DropletIDs, []int{d}) {
		t.Errorf("load balancers after the refused requests: %+v", lbs)
	}
}

package ranchersim

import (
	"net/http"
	"slices"
	"testing"
)

// TestCollectionPathByAnyName: Cattle resolves a path's type segment
// through the schema factory (DefaultApiRequestParser.parsePath,
// getSingularName), so a type's collection and resources answer under its
// id, plural and their lower-case spellings: /loadBalancerServices as
// /loadbalancerservices, /host/1h1 as /hosts/1h1.
func TestCollectionPathByAnyName(t *testing.T) {
	s, _, k := lbSetup(t)
	lb := s.AddService(Service{Name: "lb", StackID: k.Id, LaunchConfig: &LaunchConfig{Ports: []string{"80:80/tcp"}}})
	want := call(t, s, http.MethodGet, "/loadbalancerservices", "").dataIDs()
	if !slices.Equal(want, []string{lb.ID}) {
		t.Fatalf("GET /loadbalancerservices = %v, want [%s]", want, lb.ID)
	}
	for _, p := range []string{"/loadBalancerServices", "/loadBalancerService", "/loadbalancerservice"} {
		if a := call(t, s, http.MethodGet, p, ""); a.status != http.StatusOK || !slices.Equal(a.dataIDs(), want) ||
			a.body["resourceType"] != KindLoadBalancer {
			t.Errorf("GET %s: %d %v %v, want the collection", p, a.status, a.body["resourceType"], a.dataIDs())
		}
		if a := call(t, s, http.MethodGet, p+"/"+lb.ID, ""); a.status != http.StatusOK || a.body["id"] != lb.ID {
			t.Errorf("GET %s/%s: %d %v", p, lb.ID, a.status, a.body["id"])
		}
	}
	h := s.Hosts()[0]
	if a := call(t, s, http.MethodGet, "/host/"+h.ID, ""); a.status != http.StatusOK || a.body["hostname"] != h.Hostname {
		t.Errorf("GET /host/%s: %d %v", h.ID, a.status, a.body)
	}
	a := call(t, s, http.MethodPut, "/loadBalancerServices/"+lb.ID, `{"description":"camel"}`)
	if got, _ := s.Service(lb.ID); a.status != http.StatusOK || got.Description != "camel" {
		t.Errorf("PUT /loadBalancerServices/%s: %d, description %q", lb.ID, a.status, got.Description)
	}
	if a := call(t, s, http.MethodGet, "/LOADBALANCERSERVICES", ""); a.status != http.StatusNotFound {
		t.Errorf("GET /LOADBALANCERSERVICES: %d, want 404: no name of the type", a.status)
	}
}

// TestMethodNotAllowed: Cattle's ValidationHandler.validateMethod checks
// the method against the type's schema (collectionMethods for a
// collection, resourceMethods for a resource; a POST with ?action= goes
// on to the action) and answers 405 with its error body: code and
// message "Method not allowed", the 405 line of api/messages.properties.
func TestMethodNotAllowed(t *testing.T) {
	s, _, k := lbSetup(t)
	h := s.Hosts()[0]
	for _, tc := range []struct{ method, path string }{
		{http.MethodPost, "/hosts"}, // host collectionMethods: GET
		{http.MethodDelete, "/stacks"},
		{http.MethodPut, "/settings/" + SettingLBImage},
		{http.MethodDelete, "/settings/" + SettingLBImage},
		{http.MethodPost, "/ipaddresses/" + h.IPAddresses[0].ID},
		{http.MethodPost, "/services"},
		{http.MethodPost, "/stacks/" + k.Id},
		{http.MethodPost, "/schemas"},
		{http.MethodPut, "/loadBalancerServices"},
	} {
		a := call(t, s, tc.method, tc.path, "")
		if a.status != http.StatusMethodNotAllowed || a.body["type"] != "error" || a.body["status"] != float64(405) ||
			a.body["code"] != "Method not allowed" || a.body["message"] != "Method not allowed" {
			t.Errorf("%s %s: %d %v, want 405 Method not allowed", tc.method, tc.path, a.status, a.body)
		}
	}
	if a := call(t, s, http.MethodPost, "/ipaddresses/"+h.IPAddresses[0].ID+"?action=explode", ""); a.status != http.StatusUnprocessableEntity ||
		a.body["code"] != codeInvalidAction {
		t.Errorf("POST an unknown action on an ipAddress: %d %v, want 422 InvalidAction", a.status, a.body)
	}
}

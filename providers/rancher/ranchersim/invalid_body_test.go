package ranchersim

import (
	"net/http"
	"testing"
)

// TestInvalidBody: a body that is not JSON is Cattle's 400 with code
// InvalidBodyContent (BodyParserRequestHandler.getObject:
// ClientVisibleException(BAD_REQUEST, INVALID_BODY_CONTENT)), for a
// create, a PUT and an action alike; a field of the wrong type in JSON
// is the validation's 422 InvalidFormat about that field.
func TestInvalidBody(t *testing.T) {
	s, _, k := lbSetup(t)
	lb := s.AddService(Service{Name: "lb", StackID: k.Id, LaunchConfig: &LaunchConfig{Ports: []string{"80:80/tcp"}}})
	for _, tc := range []struct{ method, path string }{
		{http.MethodPost, "/stacks"},
		{http.MethodPut, "/stacks/" + k.Id},
		{http.MethodPost, "/loadbalancerservices"},
		{http.MethodPut, "/loadbalancerservices/" + lb.ID},
		{http.MethodPost, "/loadbalancerservices/" + lb.ID + "?action=setservicelinks"},
	} {
		a := call(t, s, tc.method, tc.path, `{"name": "x",`)
		if a.status != http.StatusBadRequest || a.body["code"] != codeInvalidBodyContent || a.body["type"] != "error" {
			t.Errorf("%s %s with a broken body: %d %v, want 400 InvalidBodyContent", tc.method, tc.path, a.status, a.body)
		}
	}
	a := call(t, s, http.MethodPut, "/loadbalancerservices/"+lb.ID, `{"scale": "three"}`)
	if a.status != http.StatusUnprocessableEntity || a.body["code"] != codeInvalidFormat || a.body["fieldName"] != "scale" {
		t.Errorf("scale \"three\": %d %v, want 422 InvalidFormat about scale", a.status, a.body)
	}
}

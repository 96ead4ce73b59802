package ranchersim

import (
	"net/http"
	"testing"

	rancher "github.com/rancher/go-rancher/v2"
)

// TestRemoveStack: a stack removed as by hand takes its services with it;
// while Cattle removes it, and once it has, a create in it is 422
// InvalidReference on stackId; its name is free for a new stack once it
// is removed.
func TestRemoveStack(t *testing.T) {
	s, c := setup(t, Options{})
	k, err := c.Stack.Create(&rancher.Stack{Name: "lbs", ExternalId: "lbs://"})
	if err != nil {
		t.Fatal(err)
	}
	ext, err := c.ExternalService.Create(&rancher.ExternalService{Name: "nodes", StackId: k.Id, ExternalIpAddresses: []string{"10.0.0.11"}})
	if err != nil {
		t.Fatal(err)
	}
	if s.RemoveStack("1st99") {
		t.Error("RemoveStack of no stack reported one")
	}
	if !s.RemoveStack(k.Id) {
		t.Fatalf("RemoveStack(%s) found no stack", k.Id)
	}
	if got, _ := s.Stack(k.Id); got.State != StateRemoving {
		t.Errorf("stack just removed is %s, want removing", got.State)
	}
	_, err = c.ExternalService.Create(&rancher.ExternalService{Name: "more", StackId: k.Id})
	wantAPIError(t, err, http.StatusUnprocessableEntity, "code=InvalidReference", "fieldName=stackId")
	_, err = c.Stack.Create(&rancher.Stack{Name: "lbs"})
	wantAPIError(t, err, http.StatusUnprocessableEntity, "code=NotUnique", "fieldName=name")

	s.Advance()
	if got, _ := s.Stack(k.Id); got.State != StateRemoved || got.Removed == nil {
		t.Errorf("stack after Advance = %+v, want removed", got)
	}
	if got, _ := s.Service(ext.Id); got.State != StateRemoved {
		t.Errorf("its service after Advance is %s, want removed", got.State)
	}
	_, err = c.ExternalService.Create(&rancher.ExternalService{Name: "more", StackId: k.Id})
	wantAPIError(t, err, http.StatusUnprocessableEntity, "code=InvalidReference", "fieldName=stackId")
	if _, err := c.Stack.Create(&rancher.Stack{Name: "lbs"}); err != nil {
		t.Errorf("a new stack of the removed one's name: %v", err)
	}
}

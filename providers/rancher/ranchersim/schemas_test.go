package ranchersim

import (
	"net/http"
	"testing"
)

// TestSchemaByAnyName: Cattle's SchemaFactoryImpl.addToMap registers each
// schema under its id, its id in lower case, its plural name and its
// plural in lower case, and GET /schemas/<name> resolves through that
// map. The Rancher CLI v0.6 builds its client on <project>/schemas/schemas
// (cmd/common.go GetClient: the environment URL's /schemas + "/schemas"),
// the schema of schemas.
func TestSchemaByAnyName(t *testing.T) {
	s := NewServer(t, Options{})
	for name, want := range map[string]string{
		"schema": "schema", "schemas": "schema",
		"host": "host", "hosts": "host",
		"loadBalancerService": KindLoadBalancer, "loadbalancerservice": KindLoadBalancer,
		"loadBalancerServices": KindLoadBalancer, "loadbalancerservices": KindLoadBalancer,
		"ipAddresses": "ipAddress", "ipaddress": "ipAddress",
	} {
		a := call(t, s, http.MethodGet, "/schemas/"+name, "")
		if a.status != http.StatusOK || a.body["id"] != want || a.body["type"] != "schema" {
			t.Errorf("GET /schemas/%s: %d %v, want the schema %s", name, a.status, a.body["id"], want)
		}
	}
	// Any other spelling is no name of the schema.
	for _, name := range []string{"LOADBALANCERSERVICES", "Hosts", "loadBalancerservices", "machine"} {
		if a := call(t, s, http.MethodGet, "/schemas/"+name, ""); a.status != http.StatusNotFound {
			t.Errorf("GET /schemas/%s: %d, want 404", name, a.status)
		}
	}
	if a := call(t, s, http.MethodGet, "/v2-beta/schemas/schemas", ""); a.status != http.StatusOK || a.body["id"] != "schema" {
		t.Errorf("GET /v2-beta/schemas/schemas: %d %v", a.status, a.body["id"])
	}
}

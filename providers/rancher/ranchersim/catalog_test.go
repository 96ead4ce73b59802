package ranchersim

import (
	"io"
	"net/http"
	"testing"
)

// TestCatalogService: Rancher proxies /v1-catalog to its catalog service
// (rancher/catalog-service service/routes.go), which the Rancher CLI's
// stacks reads: the API version, the schemas (X-API-Schemas naming its
// own), no catalogs and no templates; it has no /v1-catalog/projects
// route, so a path under it is gorilla/mux's text 404.
func TestCatalogService(t *testing.T) {
	s := NewServer(t, Options{})
	root := call(t, s, http.MethodGet, s.URL()+"/v1-catalog", "")
	if root.status != http.StatusOK || root.header.Get("X-API-Schemas") != s.URL()+"/v1-catalog/schemas" ||
		root.body["type"] != "apiVersion" {
		t.Fatalf("GET /v1-catalog: %d %v %v", root.status, root.header.Get("X-API-Schemas"), root.body)
	}
	schemas := call(t, s, http.MethodGet, s.URL()+"/v1-catalog/schemas", "")
	var ids []string
	for _, d := range schemas.body["data"].([]any) {
		ids = append(ids, d.(map[string]any)["id"].(string))
	}
	if len(ids) != len(catalogTypes) || ids[3] != "template" {
		t.Errorf("catalog schemas = %v", ids)
	}
	if a := call(t, s, http.MethodGet, s.URL()+"/v1-catalog/templates", ""); a.status != http.StatusOK || len(a.dataIDs()) != 0 {
		t.Errorf("templates: %d %v", a.status, a.body)
	}
	if a := call(t, s, http.MethodGet, s.URL()+"/v1-catalog/templates/library:lb:0", ""); a.status != http.StatusNotFound || a.body["status"] != "404" {
		t.Errorf("a template: %d %v", a.status, a.body)
	}
	if a := callAs(t, "", "", http.MethodGet, s.URL()+"/v1-catalog", ""); a.status != http.StatusUnauthorized {
		t.Errorf("without a key: %d", a.status)
	}
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, s.URL()+"/v1-catalog/projects/1a5", nil)
	req.SetBasicAuth(DefaultAccessKey, DefaultSecretKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusNotFound || string(body) != "404 page not found\n" {
		t.Errorf("GET /v1-catalog/projects/1a5: %s %q", resp.Status, body)
	}
}

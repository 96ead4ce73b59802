package ranchersim

import (
	"net/http"
	"strings"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// The catalog service. Rancher 1.6 proxies /v1-catalog/* to its catalog
// service (Cattle's web.xml, filter Catalog: http://localhost:8088),
// rancher/catalog-service, whose API (service/routes.go, v0.20) is
// /v1-catalog with the types apiVersion, schema, catalog, template,
// question, templateVersion and error, served with go-rancher's api
// package: every answer names its schema collection in X-API-Schemas
// (api/json_writer.go). The Rancher CLI v0.6 reads it for stacks
// (cmd/catalog.go NewCatalogOperator: the catalog client on RANCHER_URL
// with /v2-beta made /v1-catalog; then each stack's externalId as a
// template version). The simulated catalog service holds no catalog
// and no template: its lists are empty and every template is 404. It
// has no /v1-catalog/projects/<id> route, nor has the real one, so the
// CLI's stacks needs RANCHER_URL to be the server's URL, not an
// environment's.

// catalogPath is the catalog service's API path.
const catalogPath = "/v1-catalog"

// catalogTypes are the catalog service's types: id, plural, whether its
// collection is served.
var catalogTypes = []struct {
	id, plural string
	collection bool
}{
	{"apiVersion", "apiVersions", false},
	{"schema", "schemas", true},
	{"catalog", "catalogs", true},
	{"template", "templates", true},
	{"question", "questions", false},
	{"templateVersion", "templateVersions", false},
	{"error", "errors", false},
}

func (s *Server) catalogRoutes() {
	s.handle("GET "+catalogPath, s.catalogRoot)
	s.handle("GET "+catalogPath+"/schemas", s.catalogSchemas)
	s.handle("GET "+catalogPath+"/schemas/{id}", s.catalogSchema)
	for _, p := range []string{"catalogs", "templates"} {
		s.handle("GET "+catalogPath+"/"+p, s.catalogEmptyList(strings.TrimSuffix(p, "s")))
		s.handle("GET "+catalogPath+"/"+p+"/{id}", catalogNotFound)
	}
	s.handle("GET "+catalogPath+"/templateversions/{id}", catalogNotFound)
}

// catalogURL is the catalog service's API URL for a request.
func catalogURL(r *http.Request) string { return simkit.BaseURL(r) + catalogPath }

// catalogRoot answers GET /v1-catalog: the API version and its
// collections (go-rancher api.VersionHandler).
func (s *Server) catalogRoot(r *http.Request) simkit.Response {
	base := catalogURL(r)
	links := map[string]string{"self": base}
	for _, t := range catalogTypes {
		if t.collection {
			links[strings.ToLower(t.plural)] = base + "/" + strings.ToLower(t.plural)
		}
	}
	return ok(resource{ID: "v1-catalog", Type: "apiVersion", Links: links, Actions: map[string]string{}})
}

// catalogSchemaDoc is a schema of the catalog service.
func catalogSchemaDoc(base string, id, plural string, collection bool) schemaDoc {
	links := map[string]string{"self": base + "/schemas/" + strings.ToLower(id)}
	methods := []string{}
	if collection {
		links["collection"] = base + "/" + strings.ToLower(plural)
		methods = get
	}
	return schemaDoc{
		resource:   resource{ID: id, Type: "schema", Links: links, Actions: map[string]string{}},
		PluralName: plural, ResourceMethods: get, CollectionMethods: methods,
		ResourceFields: map[string]field{}, ResourceActions: map[string]action{},
		CollectionFields: map[string]field{}, CollectionActions: map[string]action{},
		CollectionFilters: map[string]filterDoc{}, IncludeableLinks: []string{},
	}
}

func (s *Server) catalogSchemas(r *http.Request) simkit.Response {
	base := catalogURL(r)
	c := collection{Type: "collection", ResourceType: "schema", Links: map[string]string{"self": base + "/schemas"},
		CreateTypes: map[string]string{}, Actions: map[string]string{}, SortLinks: map[string]string{},
		Filters: map[string][]condition{}, CreateDefaults: map[string]any{}}
	for _, t := range catalogTypes {
		c.Data = append(c.Data, catalogSchemaDoc(base, t.id, t.plural, t.collection))
	}
	return ok(c)
}

func (s *Server) catalogSchema(r *http.Request) simkit.Response {
	id := r.PathValue("id")
	for _, t := range catalogTypes {
		if strings.EqualFold(t.id, id) || strings.EqualFold(t.plural, id) {
			return ok(catalogSchemaDoc(catalogURL(r), t.id, t.plural, t.collection))
		}
	}
	return catalogNotFound(r)
}

// catalogEmptyList answers a catalog collection: none.
func (s *Server) catalogEmptyList(typ string) simkit.HandlerFunc {
	return func(r *http.Request) simkit.Response {
		return ok(collection{Type: "collection", ResourceType: typ, Links: map[string]string{"self": simkit.PageLink(r, nil)},
			CreateTypes: map[string]string{}, Actions: map[string]string{}, SortLinks: map[string]string{},
			Data: []any{}, Filters: map[string][]condition{}, CreateDefaults: map[string]any{}})
	}
}

// catalogNotFound is the catalog service's 404 (its ReturnHTTPError:
// model.CatalogError, whose status is a string).
func catalogNotFound(*http.Request) simkit.Response {
	return simkit.JSON(http.StatusNotFound, map[string]any{
		"type": "error", "status": "404", "message": "Not found", "links": map[string]string{}, "actions": map[string]string{},
	})
}

// catalogNoRoute is the catalog service's answer to a path it has no
// route for (gorilla/mux's NotFoundHandler, http.NotFound): 404, "404
// page not found" as text, e.g. /v1-catalog/projects/<id>.
func catalogNoRoute() simkit.Response {
	return simkit.Response{Status: http.StatusNotFound, Body: simkit.Raw("404 page not found\n"),
		Header: http.Header{"Content-Type": {"text/plain; charset=utf-8"}, "X-Content-Type-Options": {"nosniff"}}}
}

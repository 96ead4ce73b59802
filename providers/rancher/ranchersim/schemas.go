package ranchersim

import (
	"net/http"
	"slices"
	"strings"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// field is a resource field as a schema describes it (gdapi's Field):
// the create and update flags say what a POST and a PUT may set; a PUT's
// fields without update are dropped, as Cattle drops them.
type field struct {
	Type       string   `json:"type"`
	Create     bool     `json:"create"`
	Update     bool     `json:"update"`
	Required   bool     `json:"required,omitempty"`
	Nullable   bool     `json:"nullable"`
	Default    any      `json:"default,omitempty"`
	Options    []string `json:"options,omitempty"`
	Min        *int     `json:"min,omitempty"`
	Max        *int     `json:"max,omitempty"`
	MinLength  *int     `json:"minLength,omitempty"`
	MaxLength  *int     `json:"maxLength,omitempty"`
	ValidChars string   `json:"validChars,omitempty"`
}

// action is a resource action: the type of its input and of its answer.
type action struct {
	Input  *string `json:"input"`
	Output string  `json:"output"`
}

// filterDoc is a collection filter: the modifiers it accepts.
type filterDoc struct {
	Modifiers []string `json:"modifiers"`
}

// schemaDef is a type the API serves. Only types with a collection
// (hosts, stacks...) are listed and fetched by ID; the others are the
// shapes of embedded objects and action inputs.
type schemaDef struct {
	id, plural        string
	resourceMethods   []string
	collectionMethods []string
	actions           map[string]action
	filters           []string
	fields            map[string]field
	// includeable are the links a request's ?include= embeds in the
	// resource (the schema's includeableLinks).
	includeable []string
}

// collectionName is the type's path segment: its plural, lower case
// ("loadbalancerservices").
func (d schemaDef) collectionName() string { return strings.ToLower(d.plural) }

// schemaDoc is a schema as the API answers it, as go-rancher's Schema
// reads it.
type schemaDoc struct {
	resource
	PluralName        string               `json:"pluralName"`
	ResourceMethods   []string             `json:"resourceMethods"`
	ResourceFields    map[string]field     `json:"resourceFields"`
	ResourceActions   map[string]action    `json:"resourceActions"`
	CollectionMethods []string             `json:"collectionMethods"`
	CollectionFields  map[string]field     `json:"collectionFields"`
	CollectionActions map[string]action    `json:"collectionActions"`
	CollectionFilters map[string]filterDoc `json:"collectionFilters"`
	IncludeableLinks  []string             `json:"includeableLinks"`
}

func (v view) schema(d schemaDef) schemaDoc {
	self := v.project + "/schemas/" + strings.ToLower(d.id)
	links := map[string]string{"self": self}
	switch {
	case d.id == "project":
		links["collection"] = v.base + APIVersion + "/projects"
	case len(d.collectionMethods) > 0:
		links["collection"] = v.project + "/" + d.collectionName()
	}
	doc := schemaDoc{
		resource:          resource{ID: d.id, Type: "schema", BaseType: "schema", Links: links, Actions: map[string]string{}},
		PluralName:        d.plural,
		ResourceMethods:   orEmpty(d.resourceMethods),
		ResourceFields:    d.fields,
		ResourceActions:   d.actions,
		CollectionMethods: orEmpty(d.collectionMethods),
		CollectionFields:  map[string]field{},
		CollectionActions: map[string]action{},
		CollectionFilters: map[string]filterDoc{},
		IncludeableLinks:  orEmpty(d.includeable),
	}
	if doc.ResourceActions == nil {
		doc.ResourceActions = map[string]action{}
	}
	if doc.ResourceFields == nil {
		doc.ResourceFields = map[string]field{}
	}
	for _, f := range d.filters {
		doc.CollectionFilters[f] = filterDoc{Modifiers: filterModifiers(f)}
	}
	return doc
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// filterModifiers are the modifiers of a filter on field, by the field's
// kind as Cattle's schemas give them (go-rancher's docs/input/
// schemas.json): numbers and dates compare, references, enums and
// booleans only equal, strings also match prefixes and patterns.
func filterModifiers(field string) []string {
	switch field {
	case "id", "created", "createIndex", "removed", "removeTime":
		return []string{"eq", "ne", "lt", "lte", "gt", "gte", "null", "notnull"}
	case "accountId", "stackId", "physicalHostId", "state", "system", "isPublic",
		// references and booleans of the storage types
		"hostId", "storageDriverId", "instanceId", "volumeId", "imageId", "volumeTemplateId", "zoneId",
		"deploymentUnitId", "serviceId", "agentId", "external":
		return []string{"eq", "ne", "null", "notnull"}
	case "sizeMb", "deviceNumber", "physicalSizeMb", "virtualSizeMb", "physicalTotalSizeMb", "virtualTotalSizeMb":
		return []string{"eq", "ne", "lt", "lte", "gt", "gte", "null", "notnull"}
	}
	return []string{"eq", "ne", "prefix", "like", "notlike", "null", "notnull"}
}

// projectName is the environment's name.
const projectName = "Default"

// schemaByName returns the served type that name names, as Cattle's
// SchemaFactoryImpl.addToMap registers each schema: under its id, its id
// in lower case, its plural name and its plural in lower case ("schema",
// "schemas"; "loadBalancerService", "loadbalancerservice",
// "loadBalancerServices", "loadbalancerservices"). Schema lookups
// (/schemas/{name}) and collection paths both resolve through it.
func schemaByName(name string) (schemaDef, bool) {
	for _, d := range schemaDefs {
		if slices.Contains(d.names(), name) {
			return d, true
		}
	}
	return schemaDef{}, false
}

// names are the names Cattle knows the type by.
func (d schemaDef) names() []string {
	return []string{d.id, strings.ToLower(d.id), d.plural, strings.ToLower(d.plural)}
}

// schemaByID returns the served type with id (case-insensitive, as the
// schema links write it).
func schemaByID(id string) (schemaDef, bool) {
	i := slices.IndexFunc(schemaDefs, func(d schemaDef) bool { return strings.EqualFold(d.id, id) })
	if i < 0 {
		return schemaDef{}, false
	}
	return schemaDefs[i], true
}

// mustSchema is a served type's definition.
func mustSchema(id string) schemaDef {
	d, ok := schemaByID(id)
	if !ok {
		panic("ranchersim: no schema " + id)
	}
	return d
}

// getRoot answers GET /v2-beta: the API version document, whose
// X-API-Schemas header go-rancher's client reads the schemas from.
func (s *Server) getRoot(r *http.Request) simkit.Response {
	v := s.view(r)
	doc := map[string]any{
		"id": "v2-beta", "type": "apiVersion", "baseType": "apiVersion",
		"links": map[string]string{
			"self": v.base + APIVersion, "schemas": v.project + "/schemas", "projects": v.base + APIVersion + "/projects",
		},
		"actions": map[string]string{},
	}
	return ok(doc)
}

// listSchemas answers GET .../schemas: every type the simulator serves,
// with project-scoped links (the environment key's scope), whether asked
// at /v2-beta/schemas or under the project.
func (s *Server) listSchemas(r *http.Request) simkit.Response {
	v := s.view(r)
	c := collection{
		Type: "collection", ResourceType: "schema",
		Links:       map[string]string{"self": v.project + "/schemas"},
		CreateTypes: map[string]string{}, Actions: map[string]string{}, SortLinks: map[string]string{},
		Filters: map[string][]condition{}, CreateDefaults: map[string]any{},
	}
	for _, d := range schemaDefs {
		c.Data = append(c.Data, v.schema(d))
	}
	return ok(c)
}

// getSchema answers GET .../schemas/{id}.
func (s *Server) getSchema(r *http.Request) simkit.Response {
	d, found := schemaByName(r.PathValue("id"))
	if !found {
		return notFound()
	}
	return ok(s.view(r).schema(d))
}

// projectDoc is the environment, as GET <project URL> answers it.
type projectDoc struct {
	resource
	Name          string  `json:"name"`
	State         string  `json:"state"`
	Kind          string  `json:"kind"`
	UUID          string  `json:"uuid"`
	Orchestration string  `json:"orchestration"`
	Removed       *string `json:"removed"`
}

func (s *Server) projectDoc(v view) projectDoc {
	links := map[string]string{"self": v.project, "schemas": v.project + "/schemas"}
	for _, d := range schemaDefs {
		if len(d.collectionMethods) > 0 && d.id != "project" {
			links[d.collectionName()] = v.project + "/" + d.collectionName()
		}
	}
	return projectDoc{
		resource: resource{ID: s.opts.Project, Type: "project", BaseType: "account", Links: links, Actions: map[string]string{}},
		Name:     projectName, State: StateActive, Kind: "project", UUID: uuidFor(s.opts.Project), Orchestration: "cattle",
	}
}

// getProject answers GET <project URL> (go-rancher's first request, for
// X-API-Schemas).
func (s *Server) getProject(r *http.Request) simkit.Response {
	return ok(s.projectDoc(s.view(r)))
}

// listProjects answers GET /v2-beta/projects: the key's one environment.
func (s *Server) listProjects(r *http.Request) simkit.Response {
	v := s.view(r)
	p := s.projectDoc(v)
	return list(s, r, listing[projectDoc]{
		typ: "project", items: []*projectDoc{&p}, id: func(p *projectDoc) string { return p.ID },
		doc: func(p *projectDoc) any { return p }, filters: []string{"id", "name", "state", "kind", "uuid"},
	})
}

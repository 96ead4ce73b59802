package ranchersim

import (
	"net/http"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// emptyTypes are Cattle types the simulator serves without holding any:
// their schemas, an empty collection and 404 for any ID. The Rancher CLI
// v0.6 resolves the argument of inspect, start, stop, restart and rm
// through every type it may name (cmd/common.go Lookup: service,
// container, host, project, stack, volume, secret), and go-rancher
// refuses a type without a schema ("Unknown schema type [container]")
// before it sends anything. Containers are not simulated, so a load
// balancer's instanceIds name none that GET answers. Volumes are
// simulated (volume.go).
var emptyTypes = []schemaDef{
	emptyType("container", "containers", "hostname", "system", "externalId", "healthState"),
	emptyType("secret", "secrets"),
}

// emptyType is a served type with no resources: read-only, filtered by
// the fields every resource has and by more.
func emptyType(id, plural string, more ...string) schemaDef {
	filters := append([]string{"accountId", "created", "description", "id", "kind", "name", "removeTime",
		"removed", "state", "uuid"}, more...)
	return schemaDef{id: id, plural: plural, resourceMethods: get, collectionMethods: get, filters: filters,
		fields: commonFields(map[string]field{})}
}

// emptyRoutes serves the empty types.
func (s *Server) emptyRoutes() {
	for _, d := range emptyTypes {
		coll := projectPath + "/" + d.collectionName()
		s.handle("GET "+coll, func(r *http.Request) simkit.Response {
			return list(s, r, listing[struct{}]{typ: d.id, id: func(*struct{}) string { return "" },
				doc: func(*struct{}) any { return nil }, filters: d.filters})
		})
		s.handle("GET "+coll+"/{id}", func(*http.Request) simkit.Response { return notFound() })
	}
}

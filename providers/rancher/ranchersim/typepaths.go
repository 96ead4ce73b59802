package ranchersim

import (
	"net/http"
	"slices"
	"strings"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// Cattle resolves the type segment of a path (<project>/<type>[/<id>...])
// through its schema factory (DefaultApiRequestParser.parsePath,
// SchemaFactory.getSingularName), which knows each type by its id, id in
// lower case, plural and plural in lower case (schemaByName): so
// /loadBalancerServices, /loadbalancerservice and /hosts/1h1 as /host/1h1
// answer as the type's collection does. It then checks the method
// against the schema (ValidationHandler.validateMethod): a collection
// takes its collectionMethods, a resource its resourceMethods, a POST
// with ?action= any action of the type; anything else is 405 Method not
// allowed.

// methods are the HTTP methods the API serves.
var methods = []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodDelete}

// typeRoutes registers, for every type with a collection under the
// environment, the other names of its collection path (rewritten to the
// served one) and the 405 of the methods its routes do not serve.
func (s *Server) typeRoutes() {
	for _, d := range schemaDefs {
		if len(d.collectionMethods) == 0 || d.id == "project" {
			continue
		}
		coll := projectPath + "/" + d.collectionName()
		for _, m := range methods {
			if !s.routed[m+" "+coll] {
				s.handle(m+" "+coll, func(*http.Request) simkit.Response { return methodNotAllowed() })
			}
			op := m + " " + coll + "/{id}"
			switch {
			case s.routed[op]:
			case m == http.MethodPost:
				s.handle(op, noAction(d))
			default:
				s.handle(op, func(*http.Request) simkit.Response { return methodNotAllowed() })
			}
		}
		s.aliasRoutes(d)
	}
}

// noAction answers a POST to a resource of a type whose resources the
// simulator runs no action on: an action it does not have, or 405 without
// one.
func noAction(d schemaDef) simkit.HandlerFunc {
	return func(r *http.Request) simkit.Response {
		if name := r.URL.Query().Get("action"); name != "" {
			resp, _ := checkAction(d, nil, name)
			return resp
		}
		return methodNotAllowed()
	}
}

// aliasRoutes serves the type's collection and resources under its other
// names, as the served paths answer.
func (s *Server) aliasRoutes(d schemaDef) {
	served := d.collectionName()
	var done []string
	for _, name := range d.names() {
		if name == served || slices.Contains(done, name) {
			continue
		}
		done = append(done, name)
		from := APIVersion + "/projects/{project}/" + name
		rewrite := s.rewriteTo(name, served)
		s.HandleFunc(from, rewrite)
		s.HandleFunc(from+"/", rewrite)
	}
}

// rewriteTo serves a request for a path whose type segment is name as
// the request for the same path with the type segment served.
func (s *Server) rewriteTo(name, served string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		prefix := APIVersion + "/projects/" + r.PathValue("project") + "/"
		rest, ok := strings.CutPrefix(r.URL.Path, prefix+name)
		if !ok { // not reached: the pattern matched
			simkit.Write(w, r, s.respond(r, "", notFound()))
			return
		}
		r2 := r.Clone(r.Context())
		r2.URL.Path, r2.URL.RawPath = prefix+served+rest, ""
		r2.RequestURI = r2.URL.RequestURI()
		s.Handler().ServeHTTP(w, r2)
	}
}

package ranchersim

import (
	"net/http"
	"strings"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// RancherVersion is the rancher.server.version every answer names in
// X-Rancher-Version: the last Rancher 1.6 release, whose Cattle runs
// DefaultLBImage.
const RancherVersion = "v1.6.30"

// Headers every Cattle API answer carries (Cattle v0.183, Rancher 1.6):
//
//   - X-Rancher-Version: ApiRequestFilter.addVersionHeader, on every
//     request, before anything else runs;
//   - X-API-Schemas: gdapi's ApiRequestFilterDelegate.doFilter, the URL of
//     the schema collection, set once the request is parsed, before any
//     handler (authentication included) runs: errors carry it too;
//   - X-API-Account-Id, X-API-User-Id, X-API-Account-Kind and
//     X-API-Account-Name: ApiAuthenticator.saveInContext, once the key
//     is authenticated. An environment API key's account is the
//     environment (project) itself.
//
// Go writes header names in canonical form (X-Api-Schemas); they are
// case-insensitive (RFC 9110 §5.1).
const (
	headerRancherVersion = "X-Rancher-Version"
	headerSchemas        = "X-Api-Schemas"
	headerAccountID      = "X-Api-Account-Id"
	headerUserID         = "X-Api-User-Id"
	headerAccountKind    = "X-Api-Account-Kind"
	headerAccountName    = "X-Api-Account-Name"
)

// respond is the Kit's Respond (and the unknown paths' answer): it adds
// the headers every Cattle answer carries.
func (s *Server) respond(r *http.Request, _ string, resp simkit.Response) simkit.Response {
	resp.Header = resp.Header.Clone()
	if resp.Header == nil {
		resp.Header = http.Header{}
	}
	resp.Header.Set(headerRancherVersion, RancherVersion)
	if r.URL.Path == catalogPath || strings.HasPrefix(r.URL.Path, catalogPath+"/") {
		// The catalog service's own (catalog.go).
		resp.Header.Set(headerSchemas, catalogURL(r)+"/schemas")
	} else {
		resp.Header.Set(headerSchemas, s.ProjectURL(simkit.BaseURL(r))+"/schemas")
	}
	if _, ok := s.keys.Check(r); ok {
		resp.Header.Set(headerAccountID, s.opts.Project)
		resp.Header.Set(headerUserID, s.opts.Project)
		resp.Header.Set(headerAccountKind, "project")
		resp.Header.Set(headerAccountName, projectName)
	}
	return resp
}

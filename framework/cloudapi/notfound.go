package cloudapi

import (
	"encoding/json"
	"mime"
	"net/http"
	"slices"
	"strings"
)

// Deciding that a resource does not exist is the most dangerous call a
// provider makes: a VM taken for deleted gets its Node deleted, a load
// balancer taken for gone gets created twice. The rules below are shared
// by every provider; a provider adds only what its API's error body says.

// Target says what a request named. Only an answer about one named
// resource can say that resource does not exist.
type Target int

const (
	// Collection is a request that named no one resource: a list, a
	// search, a create. A 404 to it says the path is wrong (a wrong base
	// URL, an API version the server lacks), never that anything is gone.
	Collection Target = iota
	// OneResource is a request that named one resource: GET, PUT or
	// DELETE /droplets/{id}, an action on one server.
	OneResource
)

// NotFoundRule is how one cloud API says "the resource you named does not
// exist". An answer is that authoritative not-found only when all of
// these hold:
//
//   - the request named one resource (the caller says so: OneResource);
//   - the status is one of Statuses (404 unless the API documents more,
//     as Triton answers 410 Gone for a deleted machine);
//   - the body is the API's own: a JSON media type (application/json or
//     a +json type) and a JSON object. A proxy's HTML page, a router's
//     plain-text 404 and most wrong base URLs fail here;
//   - Condition, the provider's resource-level check of that object,
//     holds (DigitalOcean: "id" is "not_found"; OpenStack: an error
//     object such as {"itemNotFound":{...}}).
//
// Everything else, a 401, a 5xx, a timeout, an empty or truncated body, is
// an error that deletes nothing. For example:
//
//	// DigitalOcean: {"id":"not_found","message":"..."}
//	cloudapi.NotFoundRule{Condition: cloudapi.FieldEquals("not_found", "id")}
//	// Triton: 404 {"code":"ResourceNotFound"}, or 410 with the machine, "state":"deleted"
//	cloudapi.NotFoundRule{Statuses: []int{404, 410}, Condition: func(status int, body []byte) bool {
//		if status == http.StatusGone {
//			return cloudapi.FieldEquals("deleted", "state")(status, body)
//		}
//		return cloudapi.FieldEquals("ResourceNotFound", "code")(status, body)
//	}}
//
// An SDK that hides the answer (go-rancher's typed ById returns nil, nil
// on any 404, a proxy's included) gives nothing to classify: such a
// provider must make the call in a way that keeps the answer, and never
// take a nil result for a deleted resource.
type NotFoundRule struct {
	// Statuses are the API's not-found statuses; empty means 404 only.
	Statuses []int
	// Condition reports whether body, a JSON object the API answered
	// with status, says the named resource does not exist. A nil
	// Condition never holds, so a rule left unfinished deletes nothing.
	Condition func(status int, body []byte) bool
}

// IsNotFound reports whether a, the answer to a request that named t, is
// the API's authoritative "does not exist".
func (r NotFoundRule) IsNotFound(t Target, a Answer) bool {
	return t == OneResource &&
		r.Condition != nil &&
		r.isNotFoundStatus(a.Status) &&
		IsJSONMediaType(a.Header.Get("Content-Type")) &&
		isJSONObject(a.Body) &&
		r.Condition(a.Status, a.Body)
}

func (r NotFoundRule) isNotFoundStatus(status int) bool {
	if len(r.Statuses) == 0 {
		return status == http.StatusNotFound
	}
	return slices.Contains(r.Statuses, status)
}

// IsJSONMediaType reports whether contentType (a Content-Type header
// value) is JSON: application/json or an application/...+json type such as
// application/problem+json, with any parameters. An empty or malformed
// value is not.
func IsJSONMediaType(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return false
	}
	return mt == "application/json" || strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json")
}

// isJSONObject reports whether body is one JSON object (not null, an
// array, a string or a truncated document).
func isJSONObject(body []byte) bool {
	var obj map[string]json.RawMessage
	return json.Unmarshal(body, &obj) == nil && obj != nil
}

// FieldEquals returns a NotFoundRule.Condition that holds when the JSON
// string at path in the body equals want. Object keys match exactly.
//
//	cloudapi.FieldEquals("not_found", "id")            // {"id":"not_found"}
//	cloudapi.FieldEquals("not_found", "error", "code") // {"error":{"code":"not_found"}}
func FieldEquals(want string, path ...string) func(status int, body []byte) bool {
	return func(_ int, body []byte) bool {
		got, ok := stringAt(body, path)
		return ok && got == want
	}
}

// stringAt returns the JSON string at path in doc.
func stringAt(doc []byte, path []string) (string, bool) {
	raw := json.RawMessage(doc)
	for _, key := range path {
		var obj map[string]json.RawMessage
		if json.Unmarshal(raw, &obj) != nil {
			return "", false
		}
		var ok bool
		if raw, ok = obj[key]; !ok {
			return "", false
		}
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

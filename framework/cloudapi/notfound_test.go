package cloudapi

import (
	"net/http"
	"testing"
)

// Rules as the five clouds' providers write them: only the condition
// differs.
var (
	doRule       = NotFoundRule{Condition: FieldEquals("not_found", "id")}
	skeletonRule = NotFoundRule{Condition: FieldEquals("not_found", "error", "code")}
	tritonRule   = NotFoundRule{Statuses: []int{http.StatusNotFound, http.StatusGone}, Condition: func(status int, body []byte) bool {
		if status == http.StatusGone {
			return FieldEquals("deleted", "state")(status, body)
		}
		return FieldEquals("ResourceNotFound", "code")(status, body)
	}}
	brightboxRule = NotFoundRule{Condition: FieldEquals("missing_resource", "error_name")}
	rancherRule   = NotFoundRule{Condition: func(status int, body []byte) bool {
		return FieldEquals("error", "type")(status, body) && FieldEquals("NotFound", "code")(status, body)
	}}
)

func jsonAnswer(status int, body string) Answer {
	return Answer{Status: status, Header: http.Header{"Content-Type": {"application/json; charset=utf-8"}}, Body: []byte(body)}
}

func typedAnswer(status int, contentType, body string) Answer {
	return Answer{Status: status, Header: http.Header{"Content-Type": {contentType}}, Body: []byte(body)}
}

const (
	doNotFound       = `{"id":"not_found","message":"The resource you were accessing could not be found."}`
	proxyPage        = "<html><head><title>404 Not Found</title></head><body>nginx</body></html>"
	tritonNotFound   = `{"code":"ResourceNotFound","message":"VM not found"}`
	tritonDeletedVM  = `{"id":"b6979942","name":"web-1","state":"deleted"}`
	rancherNotFound  = `{"id":"c1","type":"error","status":404,"code":"NotFound","message":"Not Found","detail":null}`
	brightboxMissing = `{"error_name":"missing_resource","errors":["Resource not found"]}`
)

func TestNotFoundRule(t *testing.T) {
	tests := []struct {
		name   string
		rule   NotFoundRule
		target Target
		answer Answer
		want   bool
	}{
		// The shared part.
		{"the API's 404", doRule, OneResource, jsonAnswer(404, doNotFound), true},
		{"a list's 404", doRule, Collection, jsonAnswer(404, doNotFound), false},
		{"a proxy's HTML 404", doRule, OneResource, typedAnswer(404, "text/html", proxyPage), false},
		{"a router's plain-text 404", doRule, OneResource, typedAnswer(404, "text/plain; charset=utf-8", "404 page not found\n"), false},
		{"the API's body as text/plain", doRule, OneResource, typedAnswer(404, "text/plain", doNotFound), false},
		{"no Content-Type", doRule, OneResource, Answer{Status: 404, Body: []byte(doNotFound)}, false},
		{"a malformed Content-Type", doRule, OneResource, typedAnswer(404, "application/json; =", doNotFound), false},
		{"a +json type", doRule, OneResource, typedAnswer(404, "application/problem+json", doNotFound), true},
		{"an empty body", doRule, OneResource, jsonAnswer(404, ""), false},
		{"a truncated body", doRule, OneResource, jsonAnswer(404, doNotFound[:30]), false},
		{"a JSON array", doRule, OneResource, jsonAnswer(404, `[{"id":"not_found"}]`), false},
		{"JSON null", doRule, OneResource, jsonAnswer(404, `null`), false},
		{"a JSON string", doRule, OneResource, jsonAnswer(404, `"not_found"`), false},
		{"a 410 where only 404 counts", doRule, OneResource, jsonAnswer(410, doNotFound), false},
		{"a 401", doRule, OneResource, jsonAnswer(401, doNotFound), false},
		{"a 500", doRule, OneResource, jsonAnswer(500, doNotFound), false},
		{"a 200", doRule, OneResource, jsonAnswer(200, doNotFound), false},
		{"the zero answer", doRule, OneResource, Answer{}, false},
		{"a rule without a condition", NotFoundRule{}, OneResource, jsonAnswer(404, doNotFound), false},
		// The resource-level condition.
		{"DO: another API's JSON 404", doRule, OneResource, jsonAnswer(404, `{"message":"no route"}`), false},
		{"DO: id of another kind", doRule, OneResource, jsonAnswer(404, `{"id":"unauthorized"}`), false},
		{"DO: id not a string", doRule, OneResource, jsonAnswer(404, `{"id":404}`), false},
		{"skeleton: not_found", skeletonRule, OneResource, jsonAnswer(404, `{"error":{"code":"not_found","message":"gone"}}`), true},
		{"skeleton: unknown endpoint", skeletonRule, OneResource, jsonAnswer(404, `{"error":{"code":"unknown_endpoint"}}`), false},
		{"skeleton: error not an object", skeletonRule, OneResource, jsonAnswer(404, `{"error":"not_found"}`), false},
		{"Triton: 404 ResourceNotFound", tritonRule, OneResource, jsonAnswer(404, tritonNotFound), true},
		{"Triton: 410 with the deleted machine", tritonRule, OneResource, jsonAnswer(410, tritonDeletedVM), true},
		{"Triton: 410 with a running machine", tritonRule, OneResource, jsonAnswer(410, `{"id":"b6979942","state":"running"}`), false},
		{"Triton: 404 of another code", tritonRule, OneResource, jsonAnswer(404, `{"code":"InvalidCredentials"}`), false},
		{"Triton: a proxy's 410", tritonRule, OneResource, typedAnswer(410, "text/html", proxyPage), false},
		{"Brightbox: missing_resource", brightboxRule, OneResource, jsonAnswer(404, brightboxMissing), true},
		{"Brightbox: an OAuth error", brightboxRule, OneResource, jsonAnswer(404, `{"error":"invalid_client"}`), false},
		{"Rancher: NotFound", rancherRule, OneResource, jsonAnswer(404, rancherNotFound), true},
		{"Rancher: a 404 that is not an error resource", rancherRule, OneResource, jsonAnswer(404, `{"code":"NotFound"}`), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.rule.IsNotFound(tt.target, tt.answer); got != tt.want {
				t.Errorf("IsNotFound(%v, %d %q %s) = %v, want %v", tt.target, tt.answer.Status,
					tt.answer.Header.Get("Content-Type"), tt.answer.Body, got, tt.want)
			}
		})
	}
}

func TestIsJSONMediaType(t *testing.T) {
	for ct, want := range map[string]bool{
		"application/json":                true,
		"application/json; charset=utf-8": true,
		"Application/JSON":                true,
		"application/problem+json":        true,
		"application/vnd.api+json":        true,
		"text/json+html":                  false,
		"text/plain":                      false,
		"text/html; charset=utf-8":        false,
		"application/jsonp":               false,
		"":                                false,
		"application/json; =":             false,
	} {
		if got := IsJSONMediaType(ct); got != want {
			t.Errorf("IsJSONMediaType(%q) = %v, want %v", ct, got, want)
		}
	}
}

func TestFieldEquals(t *testing.T) {
	tests := []struct {
		body string
		path []string
		want bool
	}{
		{`{"id":"not_found"}`, []string{"id"}, true},
		{`{"id":"Not_Found"}`, []string{"id"}, false},
		{`{"ID":"not_found"}`, []string{"id"}, false},
		{`{"error":{"code":"not_found"}}`, []string{"error", "code"}, true},
		{`{"error":{"code":"not_found"}}`, []string{"code"}, false},
		{`{"error":["not_found"]}`, []string{"error", "code"}, false},
		{`{"id":null}`, []string{"id"}, false},
		{`{"id":"not_found"}`, nil, false},
		{`not json`, []string{"id"}, false},
	}
	for _, tt := range tests {
		if got := FieldEquals("not_found", tt.path...)(404, []byte(tt.body)); got != tt.want {
			t.Errorf("FieldEquals(not_found, %q)(%s) = %v, want %v", tt.path, tt.body, got, tt.want)
		}
	}
}

package digitalocean_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
)

// rawAPI answers with canned responses, for what the simulator is too
// well-behaved to send: malformed bodies, a proxy's HTML 404, droplets
// missing fields. GET /v2/account and /v2/regions always succeed so Init
// passes; every other path answers what routes says, else the API's JSON
// 404.
type rawAPI struct {
	srv    *httptest.Server
	routes map[string]rawResponse // "GET /v2/droplets" -> answer; read-only
}

type rawResponse struct {
	status      int    // 0 means 200
	contentType string // "" means application/json
	body        string
}

const (
	rawToken    = "raw-token-0123456789"
	notFoundRaw = `{"id":"not_found","message":"The resource you were accessing could not be found."}`
)

func newRawAPI(t *testing.T, routes map[string]rawResponse) *rawAPI {
	t.Helper()
	a := &rawAPI{routes: routes}
	a.srv = httptest.NewServer(http.HandlerFunc(a.serve))
	t.Cleanup(a.srv.Close)
	return a
}

// Env points the provider at the server.
func (a *rawAPI) Env() map[string]string {
	return map[string]string{"DO_ACCESS_TOKEN": rawToken, "DO_OVERRIDE_URL": a.srv.URL, "REGION": "nyc3"}
}

func (a *rawAPI) serve(w http.ResponseWriter, r *http.Request) {
	route := r.Method + " " + r.URL.Path
	resp, ok := a.routes[route]
	switch {
	case r.Header.Get("Authorization") != "Bearer "+rawToken:
		resp = rawResponse{status: http.StatusUnauthorized, body: `{"id":"Unauthorized","message":"Unable to authenticate you"}`}
	case route == "GET /v2/account":
		resp = rawResponse{body: `{"account":{"uuid":"u-1","status":"active"}}`}
	case route == "GET /v2/regions":
		resp = rawResponse{body: `{"regions":[{"slug":"nyc3","available":true},{"slug":"sfo3","available":true}],"links":{},"meta":{"total":2}}`}
	case !ok:
		resp = rawResponse{status: http.StatusNotFound, body: notFoundRaw}
	}
	if resp.contentType == "" {
		resp.contentType = "application/json; charset=utf-8"
	}
	w.Header().Set("Content-Type", resp.contentType)
	w.WriteHeader(max(resp.status, http.StatusOK))
	fmt.Fprint(w, resp.body)
}

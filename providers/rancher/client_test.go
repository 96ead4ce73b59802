package rancher

import (
	"errors"
	"net/http"
	"testing"
	"time"

	rancher "github.com/rancher/go-rancher/v2"
	"k8s.io/klog/v2/ktesting"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/framework/cloudapi"
	"github.com/ccmkit/ccmkit/framework/frameworktest"
	"github.com/ccmkit/ccmkit/providers/rancher/ranchersim"
)

// startAPI starts a simulator and the provider on it, and returns the
// provider's Cattle client.
func startAPI(t *testing.T) (*ranchersim.Server, *api) {
	t.Helper()
	sim := ranchersim.NewServer(t, ranchersim.Options{})
	vars := sim.Env(sim.URL())
	_, ctx := ktesting.NewTestContext(t)
	p := New()
	if _, err := framework.NewCloud(ctx, p, &framework.Env{
		LookupEnv: func(k string) (string, bool) { v, ok := vars[k]; return v, ok },
		CloudAPI:  cloudapi.Options{MaxRetries: -1, Timeout: 5 * time.Second},
	}); err != nil {
		t.Fatalf("NewCloud: %v", err)
	}
	return sim, p.api
}

// Only Cattle's own JSON 404 for the one resource named is a not-found;
// go-rancher's typed ById would have returned (nil, nil) for all of these.
func TestByIDNotFound(t *testing.T) {
	sim, a := startAPI(t)
	_, ctx := ktesting.NewTestContext(t)
	h := sim.AddHost(ranchersim.Host{Hostname: "node-1"})
	got, err := byID[rancher.Host](ctx, a, "hosts.get", rancher.HOST_TYPE, h.ID)
	if err != nil || got.Uuid != h.UUID {
		t.Fatalf("byID(%s) = %+v, %v; want the host", h.ID, got, err)
	}
	if _, err := byID[rancher.Host](ctx, a, "hosts.get", rancher.HOST_TYPE, "1h999"); !a.notFound(err) || !framework.IsNotFound(err) {
		t.Errorf("byID(1h999) error %v: want Cattle's not-found", err)
	}
	for name, f := range map[string]frameworktest.Fault{
		"proxy 404":    frameworktest.FaultProxyNotFound,
		"wrong base":   frameworktest.FaultWrongBaseURL,
		"401":          frameworktest.FaultUnauthorized,
		"500":          frameworktest.FaultServerError,
		"truncated":    frameworktest.FaultTruncatedBody,
		"404 not ours": {Status: http.StatusNotFound, Body: `{"message":"no route"}`, ContentType: "application/json"},
	} {
		t.Run(name, func(t *testing.T) {
			sf := f.SimFault()
			sf.Op = "GET /v2-beta/projects/{project}/hosts/{id}"
			defer sim.Inject(sf)()
			got, err := byID[rancher.Host](ctx, a, "hosts.get", rancher.HOST_TYPE, h.ID)
			if err == nil || a.notFound(err) || framework.IsNotFound(err) {
				t.Errorf("byID = %+v, %v; want an error that is not a not-found", got, err)
			}
		})
	}
	if _, err := byID[rancher.Host](ctx, a, "hosts.get", rancher.HOST_TYPE, "1h1/../x"); err == nil || a.notFound(err) {
		t.Errorf("byID of a path: %v; want an error", err)
	}
}

// notFound of a go-rancher error from a typed call: only a 404 whose body
// was Cattle's NotFound object.
func TestNotFoundOfTypedErrors(t *testing.T) {
	a := &api{}
	for _, tt := range []struct {
		err  error
		want bool
	}{
		// Cattle 1.6's body: code and message from api/messages.properties.
		{&rancher.ApiError{StatusCode: 404, Body: "baseType=error, code=Not Found, message=Not Found"}, true},
		{&rancher.ApiError{StatusCode: 404, Body: "code=NotFound, message=Not Found"}, true},
		{&rancher.ApiError{StatusCode: 404, Body: "message=Not Found, code=NotFound, detail=x"}, true},
		{&rancher.ApiError{StatusCode: 404, Body: "<html><body>404 Not Found</body></html>"}, false},
		{&rancher.ApiError{StatusCode: 401, Body: "code=Unauthorized"}, false},
		{&rancher.ApiError{StatusCode: 404, Body: "code=NotFoundish"}, false},
		{errors.New("code=NotFound"), false},
		{nil, false},
	} {
		if got := a.notFound(tt.err); got != tt.want {
			t.Errorf("notFound(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
}

// A list whose next link points back, or whose page is malformed, fails
// whole: a partial host list must never look complete.
func TestListAllMalformed(t *testing.T) {
	sim, a := startAPI(t)
	_, ctx := ktesting.NewTestContext(t)
	for range 3 {
		sim.AddHost(ranchersim.Host{})
	}
	hosts, err := listAll[rancher.Host](ctx, a, "hosts.list", rancher.HOST_TYPE, nil, 2)
	if err != nil || len(hosts) != 3 {
		t.Fatalf("listAll = %d hosts, %v; want 3", len(hosts), err)
	}
	sf := frameworktest.FaultTruncatedBody.SimFault()
	sf.Op = "GET /v2-beta/projects/{project}/hosts"
	defer sim.Inject(sf)()
	if hosts, err := listAll[rancher.Host](ctx, a, "hosts.list", rancher.HOST_TYPE, nil, 2); err == nil {
		t.Errorf("listAll of truncated pages = %d hosts, nil; want an error", len(hosts))
	}
}

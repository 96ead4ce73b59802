package cloud

import (
	"errors"
	"net/http"
	"testing"
	"time"

	rancher "github.com/rancher/go-rancher/v2"
	"k8s.io/klog/v2/ktesting"

	"github.com/ccmkit/ccmkit/framework/cloudapi"
	"github.com/ccmkit/ccmkit/framework/config"
	"github.com/ccmkit/ccmkit/framework/frameworktest"
	"github.com/ccmkit/ccmkit/providers/rancher/ranchersim"
)

// errTestNotFound is the not-found sentinel the tests' client wraps, as
// the CCM's wraps framework.ErrNotFound and the CSI driver's
// csi.ErrNotFound.
var errTestNotFound = errors.New("test: not found")

// startAPI starts a simulator and connects to it as both binaries do, and
// returns the client.
func startAPI(t *testing.T) (*ranchersim.Server, *API) {
	t.Helper()
	sim := ranchersim.NewServer(t, ranchersim.Options{})
	vars := sim.Env(sim.URL())
	_, ctx := ktesting.NewTestContext(t)
	hc := cloudapi.NewClient(cloudapi.Options{Provider: ProviderName, MaxRetries: -1, Timeout: 5 * time.Second})
	a, err := Connect(ctx, &Credentials{
		URL: vars["CATTLE_URL"], AccessKey: config.NewSecret(vars["CATTLE_ACCESS_KEY"]), SecretKey: config.NewSecret(vars["CATTLE_SECRET_KEY"]),
	}, hc, errTestNotFound)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	return sim, a
}

// Only Cattle's own JSON 404 for the one resource named is a not-found;
// go-rancher's typed ById would have returned (nil, nil) for all of these.
func TestByIDNotFound(t *testing.T) {
	sim, a := startAPI(t)
	_, ctx := ktesting.NewTestContext(t)
	h := sim.AddHost(ranchersim.Host{Hostname: "node-1"})
	got, err := ByID[rancher.Host](ctx, a, "hosts.get", rancher.HOST_TYPE, h.ID)
	if err != nil || got.Uuid != h.UUID {
		t.Fatalf("ByID(%s) = %+v, %v; want the host", h.ID, got, err)
	}
	if _, err := ByID[rancher.Host](ctx, a, "hosts.get", rancher.HOST_TYPE, "1h999"); !a.NotFound(err) || !errors.Is(err, errTestNotFound) {
		t.Errorf("ByID(1h999) error %v: want Cattle's not-found", err)
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
			got, err := ByID[rancher.Host](ctx, a, "hosts.get", rancher.HOST_TYPE, h.ID)
			if err == nil || a.NotFound(err) || errors.Is(err, errTestNotFound) {
				t.Errorf("ByID = %+v, %v; want an error that is not a not-found", got, err)
			}
		})
	}
	if _, err := ByID[rancher.Host](ctx, a, "hosts.get", rancher.HOST_TYPE, "1h1/../x"); err == nil || a.NotFound(err) {
		t.Errorf("ByID of a path: %v; want an error", err)
	}
}

// NotFound of a go-rancher error from a typed call: only a 404 whose body
// was Cattle's NotFound object.
func TestNotFoundOfTypedErrors(t *testing.T) {
	a := &API{}
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
		if got := a.NotFound(tt.err); got != tt.want {
			t.Errorf("NotFound(%v) = %v, want %v", tt.err, got, tt.want)
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
	hosts, err := ListAll[rancher.Host](ctx, a, "hosts.list", rancher.HOST_TYPE, nil, 2)
	if err != nil || len(hosts) != 3 {
		t.Fatalf("ListAll = %d hosts, %v; want 3", len(hosts), err)
	}
	sf := frameworktest.FaultTruncatedBody.SimFault()
	sf.Op = "GET /v2-beta/projects/{project}/hosts"
	defer sim.Inject(sf)()
	if hosts, err := ListAll[rancher.Host](ctx, a, "hosts.list", rancher.HOST_TYPE, nil, 2); err == nil {
		t.Errorf("ListAll of truncated pages = %d hosts, nil; want an error", len(hosts))
	}
}

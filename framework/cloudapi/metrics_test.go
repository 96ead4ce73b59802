package cloudapi

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/component-base/metrics/testutil"
)

func TestMetrics(t *testing.T) {
	Register() // a second registration must be a no-op, not a panic
	for _, v := range []interface{ Reset() }{requestsTotal, retriesTotal, requestDuration, rateLimitWait} {
		v.Reset()
	}
	srv := newScriptedServer(t,
		reply{status: http.StatusTooManyRequests, header: map[string]string{"Retry-After": "0"}},
		reply{status: http.StatusOK},
		reply{status: http.StatusInternalServerError},
	)
	tr, _ := newFakeTimeTransport(Options{Provider: "metrics-test", QPS: 1000})
	send := func(ctx context.Context, method, url string) {
		t.Helper()
		_ = roundTripErr(tr, newRequest(t, ctx, method, url, "{}"))
	}
	send(t.Context(), http.MethodGet, srv.URL+"/v2/droplets/123")                         // 429, then 200
	send(t.Context(), http.MethodPost, srv.URL+"/v2/droplets")                            // 500, not retried
	send(WithOperation(t.Context(), "droplets.list"), http.MethodGet, closedServerURL(t)) // transport errors

	want := `
# HELP cloudprovider_api_requests_total [ALPHA] Number of HTTP requests sent to the cloud API, one per attempt, by provider, operation and HTTP status code ("error" when no response was received).
# TYPE cloudprovider_api_requests_total counter
cloudprovider_api_requests_total{code="200",operation="GET /v2/droplets/{id}",provider="metrics-test"} 1
cloudprovider_api_requests_total{code="429",operation="GET /v2/droplets/{id}",provider="metrics-test"} 1
cloudprovider_api_requests_total{code="500",operation="POST /v2/droplets",provider="metrics-test"} 1
cloudprovider_api_requests_total{code="error",operation="droplets.list",provider="metrics-test"} 6
# HELP cloudprovider_api_retries_total [ALPHA] Number of cloud API request retries by provider, operation and reason (HTTP status code, "timeout" or "error").
# TYPE cloudprovider_api_retries_total counter
cloudprovider_api_retries_total{operation="GET /v2/droplets/{id}",provider="metrics-test",reason="429"} 1
cloudprovider_api_retries_total{operation="droplets.list",provider="metrics-test",reason="error"} 5
`
	if err := testutil.GatherAndCompare(legacyregistry.DefaultGatherer, strings.NewReader(want),
		"cloudprovider_api_requests_total", "cloudprovider_api_retries_total"); err != nil {
		t.Error(err)
	}

	for op, wantCount := range map[string]uint64{"GET /v2/droplets/{id}": 2, "POST /v2/droplets": 1, "droplets.list": 6} {
		got, err := testutil.GetHistogramMetricCount(requestDuration.WithLabelValues("metrics-test", op))
		if err != nil || got != wantCount {
			t.Errorf("request_duration_seconds count for %q = %d (%v), want %d", op, got, err, wantCount)
		}
	}
	if got, err := testutil.GetHistogramMetricCount(rateLimitWait.WithLabelValues("metrics-test")); err != nil || got != 9 {
		t.Errorf("rate_limit_wait_seconds count = %d (%v), want one per attempt (9)", got, err)
	}
}

func TestTimeoutRetriesAreLabelled(t *testing.T) {
	retriesTotal.Reset()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done() // never answers
	}))
	defer srv.Close()
	tr, _ := newFakeTimeTransport(Options{Provider: "timeout-test", Timeout: 20 * time.Millisecond, MaxRetries: 1, Budget: time.Minute})
	if err := roundTripErr(tr, newRequest(t, t.Context(), http.MethodGet, srv.URL+"/v1/x", "")); err == nil {
		t.Fatal("want a timeout error")
	}
	got, err := testutil.GetCounterMetricValue(retriesTotal.WithLabelValues("timeout-test", "GET /v1/x", "timeout"))
	if err != nil || got != 1 {
		t.Errorf("retries_total{reason=timeout} = %v (%v), want 1", got, err)
	}
}

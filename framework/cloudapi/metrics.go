package cloudapi

import (
	"sync"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
)

const metricsNamespace = "cloudprovider"
const metricsSubsystem = "api"

var (
	requestsTotal = metrics.NewCounterVec(&metrics.CounterOpts{
		Namespace:      metricsNamespace,
		Subsystem:      metricsSubsystem,
		Name:           "requests_total",
		Help:           "Number of HTTP requests sent to the cloud API, one per attempt, by provider, operation and HTTP status code (\"error\" when no response was received).",
		StabilityLevel: metrics.ALPHA,
	}, []string{"provider", "operation", "code"})

	requestDuration = metrics.NewHistogramVec(&metrics.HistogramOpts{
		Namespace:      metricsNamespace,
		Subsystem:      metricsSubsystem,
		Name:           "request_duration_seconds",
		Help:           "Time until the cloud API returned response headers or an error, per attempt, by provider and operation.",
		Buckets:        []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60},
		StabilityLevel: metrics.ALPHA,
	}, []string{"provider", "operation"})

	rateLimitWait = metrics.NewHistogramVec(&metrics.HistogramOpts{
		Namespace:      metricsNamespace,
		Subsystem:      metricsSubsystem,
		Name:           "rate_limit_wait_seconds",
		Help:           "Time requests spent waiting for the client-side cloud API rate limiter, by provider.",
		Buckets:        []float64{0.001, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60},
		StabilityLevel: metrics.ALPHA,
	}, []string{"provider"})

	retriesTotal = metrics.NewCounterVec(&metrics.CounterOpts{
		Namespace:      metricsNamespace,
		Subsystem:      metricsSubsystem,
		Name:           "retries_total",
		Help:           "Number of cloud API request retries by provider, operation and reason (HTTP status code, \"timeout\" or \"error\").",
		StabilityLevel: metrics.ALPHA,
	}, []string{"provider", "operation", "reason"})
)

var registerOnce sync.Once

// Register registers the cloud API metrics on legacyregistry, which the
// cloud-controller-manager serves on /metrics. It is idempotent and is
// called by NewTransport; metrics are not recorded before it runs.
func Register() {
	registerOnce.Do(func() {
		legacyregistry.MustRegister(requestsTotal, requestDuration, rateLimitWait, retriesTotal)
	})
}

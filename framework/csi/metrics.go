package csi

import (
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc/codes"
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
)

const (
	metricsNamespace = "cloudprovider"
	metricsSubsystem = "csi"
)

// newVecs makes the driver's metrics.
func newVecs() (*metrics.CounterVec, *metrics.HistogramVec) {
	return metrics.NewCounterVec(&metrics.CounterOpts{
			Namespace:      metricsNamespace,
			Subsystem:      metricsSubsystem,
			Name:           "operations_total",
			Help:           "CSI calls the driver answered, by driver, method (CreateVolume, NodeStageVolume, ...) and gRPC status code; the errors are those with a code other than OK (Aborted: the cloud or another call is still working on the volume).",
			StabilityLevel: metrics.ALPHA,
		}, []string{"driver", "method", "code"}),
		metrics.NewHistogramVec(&metrics.HistogramOpts{
			Namespace:      metricsNamespace,
			Subsystem:      metricsSubsystem,
			Name:           "operation_duration_seconds",
			Help:           "Time the driver took to answer a CSI call, by driver, method and gRPC status code.",
			Buckets:        []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120},
			StabilityLevel: metrics.ALPHA,
		}, []string{"driver", "method", "code"})
}

var (
	legacyOnce sync.Once
	legacy     *recorder
)

// recorder records the driver's calls.
type recorder struct {
	driver     string
	operations *metrics.CounterVec
	duration   *metrics.HistogramVec
}

// newRecorder registers the metrics on reg, or once on legacyregistry
// when reg is nil.
func newRecorder(reg metrics.KubeRegistry, driver string) *recorder {
	if reg == nil {
		legacyOnce.Do(func() {
			legacy = &recorder{}
			legacy.operations, legacy.duration = newVecs()
			legacyregistry.MustRegister(legacy.operations, legacy.duration)
		})
		return &recorder{driver: driver, operations: legacy.operations, duration: legacy.duration}
	}
	r := &recorder{driver: driver}
	r.operations, r.duration = newVecs()
	for _, c := range []metrics.Registerable{r.operations, r.duration} {
		if err := reg.Register(c); err != nil && !errors.As(err, new(prometheus.AlreadyRegisteredError)) {
			panic(err) // only a clash of metric names gets here
		}
	}
	return r
}

func (r *recorder) observe(method string, code codes.Code, d time.Duration) {
	r.operations.WithLabelValues(r.driver, method, code.String()).Inc()
	r.duration.WithLabelValues(r.driver, method, code.String()).Observe(d.Seconds())
}

func metricsHandler(reg metrics.KubeRegistry) http.Handler {
	return metrics.HandlerFor(reg, metrics.HandlerOpts{})
}

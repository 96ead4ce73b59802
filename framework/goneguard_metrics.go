package framework

import (
	"sync"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
)

var (
	guardWithheld = metrics.NewGaugeVec(&metrics.GaugeOpts{
		Namespace:      "cloudprovider",
		Name:           "node_deletion_withheld",
		Help:           "Nodes whose VM the cloud says is gone but which the CCM keeps, because the cloud sees none of the cluster's VMs (a credential of another account, project or environment is the likely cause), by provider; 0 while the cloud sees the cluster. Alert when above 0.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"provider"})

	guardChecks = metrics.NewCounterVec(&metrics.CounterOpts{
		Namespace:      "cloudprovider",
		Name:           "node_deletion_guard_checks_total",
		Help:           "Checks the node-deletion guard made before reporting a Node's VM gone, by provider and verdict (\"seen\": the cloud sees the cluster and the Node goes; \"unseen\": its deletion is withheld).",
		StabilityLevel: metrics.ALPHA,
	}, []string{"provider", "verdict"})

	guardMetricsOnce sync.Once
)

// registerGuardMetrics registers the guard's metrics on legacyregistry,
// which the cloud-controller-manager serves on /metrics.
func registerGuardMetrics() {
	guardMetricsOnce.Do(func() { legacyregistry.MustRegister(guardWithheld, guardChecks) })
}

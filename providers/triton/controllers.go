package triton

import (
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/labels"
	corelisters "k8s.io/client-go/listers/core/v1"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/framework/providerid"
)

var _ framework.ControllersProvider = (*Provider)(nil)

// Controllers implements framework.ControllersProvider: the provider's
// extra control loops, each with its own --controllers name. The CNS drain
// controller (drain.go) takes NotReady and cordoned nodes out of the CNS
// services the load balancers use; the firewall controller
// (firewall_controller.go) keeps the cluster's Cloud Firewall rules; the
// metrics controller (cmon_controller.go) sets the nodes up for CMON; with
// TRITON_LB_MODE none, the last (lb_disabled.go) warns each Service of
// type LoadBalancer that it gets none.
func (p *Provider) Controllers() []framework.Controller {
	return []framework.Controller{p.drainControllerFor(), p.firewallControllerFor(), p.cmonControllerFor(), p.lbDisabledControllerFor()}
}

// nodeMachineIDs returns the machine UUIDs of the Nodes with a Triton
// providerID, sorted; a Node not initialized yet has none.
func nodeMachineIDs(nodes corelisters.NodeLister, codec providerid.Codec) ([]string, error) {
	all, err := nodes.List(labels.Everything())
	if err != nil {
		return nil, fmt.Errorf("listing Nodes: %w", err)
	}
	var ids []string
	for _, n := range all {
		if n.Spec.ProviderID == "" {
			continue
		}
		if id, err := codec.Parse(n.Spec.ProviderID); err == nil {
			ids = append(ids, id.Value)
		}
	}
	slices.Sort(ids)
	return slices.Compact(ids), nil
}

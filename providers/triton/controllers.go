package triton

import "github.com/ccmkit/ccmkit/framework"

var _ framework.ControllersProvider = (*Provider)(nil)

// Controllers implements framework.ControllersProvider: the provider's
// extra control loops, each with its own --controllers name. The CNS drain
// controller (drain.go) takes NotReady and cordoned nodes out of the CNS
// services the load balancers use; the firewall controller
// (firewall_controller.go) keeps the cluster's Cloud Firewall rules; the
// metrics controller (cmon_controller.go) sets the nodes up for CMON.
func (p *Provider) Controllers() []framework.Controller {
	return []framework.Controller{p.drainControllerFor(), p.firewallControllerFor(), p.cmonControllerFor()}
}

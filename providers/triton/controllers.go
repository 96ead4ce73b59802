package triton

import "github.com/ccmkit/ccmkit/framework"

var _ framework.ControllersProvider = (*Provider)(nil)

// Controllers implements framework.ControllersProvider: the provider's
// extra control loops. (Stub: the load-balancer helper adds the CNS drain
// controller; issue 13 the firewall and metrics controllers.)
func (p *Provider) Controllers() []framework.Controller { return nil }

package triton

import (
	"context"

	"github.com/ccmkit/ccmkit/framework"
)

// FirewallControllerName names the firewall controller for --controllers.
const FirewallControllerName = "triton-firewall"

// firewallControllerFor is the framework.Controller of the firewall
// controller. (Stub: the firewall helper writes it.)
func (p *Provider) firewallControllerFor() framework.Controller {
	return framework.Controller{Name: FirewallControllerName, Run: func(context.Context, *framework.Env) error { return nil }}
}

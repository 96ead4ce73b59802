package triton

import (
	"context"

	"github.com/ccmkit/ccmkit/framework"
)

// CMONControllerName names the metrics controller for --controllers.
const CMONControllerName = "triton-cmon"

// cmonControllerFor is the framework.Controller of the metrics controller.
// (Stub: the CMON helper writes it.)
func (p *Provider) cmonControllerFor() framework.Controller {
	return framework.Controller{Name: CMONControllerName, Run: func(context.Context, *framework.Env) error { return nil }}
}

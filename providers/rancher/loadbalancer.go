package rancher

import (
	"context"

	cloudprovider "k8s.io/cloud-provider"

	"github.com/ccmkit/ccmkit/framework"
)

// newLoadBalancer builds the load-balancer half of the provider. (Stub: the
// load-balancer helper writes it.)
func newLoadBalancer(_ context.Context, _ *framework.Env, _ *Provider) (cloudprovider.LoadBalancer, error) {
	return nil, nil
}

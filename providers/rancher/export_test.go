package rancher

import rancher "github.com/rancher/go-rancher/v2"

// APIClient returns the go-rancher client Init built, for tests that make
// the typed calls the load-balancer half makes (without a context).
func (p *Provider) APIClient() *rancher.RancherClient { return p.api.client }

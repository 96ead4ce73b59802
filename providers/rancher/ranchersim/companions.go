package ranchersim

import "github.com/ccmkit/ccmkit/framework/frameworktest/simkit"

var _ simkit.CompanionNamer = (*Cloud)(nil)

// Companions lists what the Rancher CCM creates beside its load-balancer
// services, as "<kind>/<id>" with the ID of the load balancer each serves
// ("" for none):
//
//   - "externalservice/<id>": every external service not removed (one
//     being removed still exists). It serves the load balancer, neither
//     removed nor being removed, that consumes it, as Cattle holds it: by a
//     service link or a port rule's serviceId.
//
// The stack the load balancers share is no load balancer's companion: it
// outlives them all.
func (c *Cloud) Companions() map[string]string {
	c.mu.Lock()
	defer c.mu.Unlock()
	consumer := map[string]string{}
	for _, svc := range c.st.services.All() {
		if !liveLB(svc) {
			continue
		}
		var targets []string
		for _, l := range svc.Links {
			targets = append(targets, l.ServiceID)
		}
		if svc.LBConfig != nil {
			for _, pr := range svc.LBConfig.PortRules {
				targets = append(targets, pr.ServiceID)
			}
		}
		for _, id := range targets {
			if _, seen := consumer[id]; !seen && id != "" {
				consumer[id] = svc.ID
			}
		}
	}
	out := map[string]string{}
	for _, svc := range c.st.services.All() {
		if svc.Kind == KindExternal && svc.Removed == nil {
			out["externalservice/"+svc.ID] = consumer[svc.ID]
		}
	}
	return out
}

// CompanionNames gives each external service of Companions its name
// (lb-<load balancer name>-nodes[-<hash>]).
func (c *Cloud) CompanionNames() map[string]string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]string{}
	for _, svc := range c.st.services.All() {
		if svc.Kind == KindExternal && svc.Removed == nil {
			out["externalservice/"+svc.ID] = svc.Name
		}
	}
	return out
}

package skeleton_test

import (
	"fmt"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/ccmkit/ccmkit/examples/skeleton"
	"github.com/ccmkit/ccmkit/examples/skeleton/skeletonsim"
	"github.com/ccmkit/ccmkit/framework/frameworktest"
)

// TestConformance runs the framework's behavioural contract (not-found
// semantics, idempotent load balancers with zero writes on a no-op, routes)
// against the provider and the simulator. Every provider has this test.
func TestConformance(t *testing.T) {
	frameworktest.RunConformance(t, harness{})
}

// harness connects the conformance suite to a fresh simulated cloud.
type harness struct{}

func (harness) Setup(t *testing.T) *frameworktest.Target {
	sim := skeletonsim.NewServer(t, skeletonsim.Options{})
	return &frameworktest.Target{
		Provider: skeleton.New(),
		Env: map[string]string{
			"SKELETON_API_URL": sim.URL(),
			"SKELETON_TOKEN":   sim.Token(),
		},
		Cloud: &simCloud{sim: sim},
		InvalidAnnotations: map[string]string{
			skeleton.AnnotationPrefix + "health-check-interval": "abc",
		},
	}
}

// simCloud is the simulator as the conformance suite sees it.
type simCloud struct {
	sim *skeletonsim.Server
	n   atomic.Int32
}

var _ frameworktest.Cloud = (*simCloud)(nil)

func (c *simCloud) AddInstance(name string) string {
	n := c.n.Add(1)
	return c.sim.AddInstance(skeletonsim.Instance{
		Name:        name,
		Type:        "s-2",
		Region:      "sk-1",
		Zone:        "sk-1a",
		PrivateIPv4: fmt.Sprintf("10.0.%d.%d", n/250, n%250+1),
		PublicIPv4:  fmt.Sprintf("203.0.%d.%d", n/250, n%250+1),
		PublicIPv6:  fmt.Sprintf("2001:db8::%x", n),
	}).ID
}

func (c *simCloud) DeleteInstance(id string) { c.sim.DeleteInstance(id) }

func (c *simCloud) ShutdownInstance(id string) {
	c.sim.SetInstanceStatus(id, skeletonsim.StatusStopped)
}

func (c *simCloud) Fail(f frameworktest.Fault) (restore func()) {
	return c.sim.Inject(skeletonsim.Fault{Status: f.Status, Delay: f.Delay})
}

func (c *simCloud) Writes() int { return c.sim.Writes() }

func (c *simCloud) Advance() { c.sim.Advance() }

func (c *simCloud) LoadBalancers() []frameworktest.LoadBalancer {
	var out []frameworktest.LoadBalancer
	for _, lb := range c.sim.LoadBalancers() {
		out = append(out, neutral(lb))
	}
	return out
}

// neutral is a simulated load balancer in the suite's provider-neutral form.
func neutral(lb skeletonsim.LoadBalancer) frameworktest.LoadBalancer {
	out := frameworktest.LoadBalancer{ID: lb.ID, Name: lb.Name, Members: slices.Sorted(slices.Values(lb.Members))}
	for _, l := range lb.Listeners {
		out.Listeners = append(out.Listeners, fmt.Sprintf("%s:%d->:%d", l.Protocol, l.Port, l.TargetPort))
	}
	slices.Sort(out.Listeners)
	return out
}

package triton_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/ccmkit/ccmkit/framework/frameworktest"
	"github.com/ccmkit/ccmkit/internal/cluster"
	"github.com/ccmkit/ccmkit/providers/triton/tritonsim"
)

// soakSupport is what the soak (internal/soak) takes Triton to accept.
func soakSupport(t *testing.T) cluster.SoakSupport {
	t.Helper()
	i := slices.IndexFunc(cluster.Providers, func(p cluster.Provider) bool { return p.Name == "triton" })
	if i < 0 {
		t.Fatal("no triton in cluster.Providers")
	}
	return cluster.Providers[i].Soak
}

// TestSoakValidAnnotations: every value the soak switches a Service's
// annotation to as a valid one is one the provider serves, an appliance
// whose metadata holds it; every invalid one is a Warning and no write.
// The soak once took max-backends "16" (under the documented 32) for
// valid: the Services it set it on kept, after a type change to ClusterIP
// and back, an ID annotation naming the appliance deleted meanwhile, and
// the soak counted them as Services without their load balancer.
func TestSoakValidAnnotations(t *testing.T) {
	soak := soakSupport(t)
	for key, values := range soak.Valid {
		for _, v := range values {
			f := newLBFixture(t, tritonsim.Options{}, nil)
			svc := f.Service(t, "web", map[string]string{key: v})
			f.EnsureReady(t, svc)
			apps := f.appliances()
			if len(apps) != 1 {
				t.Fatalf("%s=%q: %d appliances, want 1", key, v, len(apps))
			}
			if key == "triton.tritondatacenter.com/load-balancer-max-backends" && apps[0].Metadata["cloud.tritoncompute:max_rs"] != v {
				t.Errorf("%s=%q: appliance max_rs %q", key, v, apps[0].Metadata["cloud.tritoncompute:max_rs"])
			}
		}
	}
	for key, v := range soak.Invalid {
		f := newLBFixture(t, tritonsim.Options{}, nil)
		svc := f.Service(t, "web", map[string]string{key: v})
		before := f.sim.Writes()
		if _, err := f.LB.EnsureLoadBalancer(f.Ctx, f.ClusterName, svc, f.Nodes); err == nil || frameworktest.IsRetry(err) {
			t.Errorf("%s=%q: EnsureLoadBalancer = %v, want an error", key, v, err)
		}
		if got := f.sim.Writes(); got != before {
			t.Errorf("%s=%q: %d writes, want none", key, v, got-before)
		}
		if !slices.ContainsFunc(f.Drain(), func(e string) bool { return strings.HasPrefix(e, "Warning ") && strings.Contains(e, key) }) {
			t.Errorf("%s=%q: no Warning Event naming the annotation", key, v)
		}
	}
}

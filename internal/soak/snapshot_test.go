package soak

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ccmkit/ccmkit/internal/cluster"
)

// TestServiceWarnedAboutWhatMakesItInvalid: a Warning about something else
// (a 5xx during a sync) does not count as the one an invalid Service needs.
func TestServiceWarnedAboutWhatMakesItInvalid(t *testing.T) {
	caps := Capabilities{Invalid: map[string]string{"x/interval": "abc"}}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Annotations: map[string]string{"x/id": "lb-1"}},
		Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, LoadBalancerSourceRanges: []string{"10.0.0.0/8"}},
	}
	other := []string{"Error syncing load balancer: 503 Service Unavailable"}
	got := service(svc, "x/id", caps, other)
	if got.Invalid == "" || got.Warned || got.LBID != "lb-1" {
		t.Fatalf("unsupported source ranges with an unrelated Warning: %+v", got)
	}
	if got = service(svc, "x/id", caps, append(other, "spec.loadBalancerSourceRanges: not supported")); !got.Warned {
		t.Fatalf("a Warning naming loadBalancerSourceRanges not counted: %+v", got)
	}
	svc.Spec.LoadBalancerSourceRanges = nil
	svc.Annotations["x/interval"] = "abc"
	if got = service(svc, "x/id", caps, []string{`annotation "x/interval": invalid value "abc"`}); got.Invalid == "" || !got.Warned {
		t.Fatalf("an invalid annotation warned about: %+v", got)
	}
	svc.Annotations["x/interval"] = "5"
	if got = service(svc, "x/id", caps, nil); got.Invalid != "" {
		t.Fatalf("a valid Service taken for invalid: %+v", got)
	}
}

// TestCompanionNamesReachTheSoak: the soak reads a simulator's companion
// names (simkit.CompanionNamer) through the cluster's Sim, which wraps it;
// without them every leftover of a refused Service is taken for a leak.
func TestCompanionNamesReachTheSoak(t *testing.T) {
	p, ok := cluster.Lookup("rancher")
	if !ok {
		t.Fatal("no rancher provider")
	}
	s, err := p.StartSim(cluster.SimOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if lbs, names := companions(s); lbs == nil || names == nil {
		t.Fatalf("rancher's companions %v and names %v through the cluster's Sim, want both", lbs, names)
	}
}

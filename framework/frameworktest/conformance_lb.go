package frameworktest

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ccmkit/ccmkit/framework"
)

// service creates a LoadBalancer Service in the fake API server.
func (s *suite) service(t *testing.T, name string, extra map[string]string) *corev1.Service {
	t.Helper()
	svc := lbService(name, types.UID("svc-uid-"+name), withAnnotations(s.target.Annotations, extra), []corev1.ServicePort{httpPort})
	return create(t, s.ctx, s.kube, svc)
}

// fresh re-reads svc, as the service controller would see it on its next
// sync (with any annotation the pipeline wrote back).
func (s *suite) fresh(t *testing.T, svc *corev1.Service) *corev1.Service {
	t.Helper()
	return stored(t, s.ctx, s.kube, svc)
}

// ensure calls EnsureLoadBalancer until the LB is ready, advancing the
// simulated cloud whenever the pipeline asks to be retried.
func (s *suite) ensure(t *testing.T, svc *corev1.Service, nodes []*corev1.Node) *corev1.LoadBalancerStatus {
	t.Helper()
	for range s.target.MaxProvisioningPolls {
		status, err := s.cloud.lb.EnsureLoadBalancer(s.ctx, clusterName, s.fresh(t, svc), nodes)
		if err == nil {
			if status == nil || len(status.Ingress) == 0 {
				t.Fatalf("EnsureLoadBalancer returned no ingress: %+v", status)
			}
			return status
		}
		if !IsRetry(err) {
			t.Fatalf("EnsureLoadBalancer: %v", err)
		}
		s.target.Cloud.Advance()
	}
	t.Fatalf("EnsureLoadBalancer: not ready after %d polls", s.target.MaxProvisioningPolls)
	return nil
}

// update calls UpdateLoadBalancer until it succeeds.
func (s *suite) update(t *testing.T, svc *corev1.Service, nodes []*corev1.Node) {
	t.Helper()
	for range s.target.MaxProvisioningPolls {
		err := s.cloud.lb.UpdateLoadBalancer(s.ctx, clusterName, s.fresh(t, svc), nodes)
		if err == nil {
			return
		}
		if !IsRetry(err) {
			t.Fatalf("UpdateLoadBalancer: %v", err)
		}
		s.target.Cloud.Advance()
	}
	t.Fatalf("UpdateLoadBalancer: not done after %d polls", s.target.MaxProvisioningPolls)
}

func (s *suite) onlyLB(t *testing.T) LoadBalancer {
	t.Helper()
	return onlyLoadBalancer(t, s.target.Cloud)
}

// memberIDs returns the sorted cloud IDs of nodes.
func (s *suite) memberIDs(t *testing.T, nodes []*corev1.Node) []string {
	t.Helper()
	var ids []string
	for _, n := range nodes {
		id, err := framework.Codec(s.target.Provider).Parse(n.Spec.ProviderID)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id.Value)
	}
	sort.Strings(ids)
	return ids
}

func testEnsureIdempotent(t *testing.T, s *suite) {
	nodes := s.addNodes("lb", 2)
	svc := s.service(t, "web", nil)
	first := s.ensure(t, svc, nodes)

	lb := s.onlyLB(t)
	if diff := cmp.Diff(s.memberIDs(t, nodes), lb.Members); diff != "" {
		t.Errorf("LB members (-want +got):\n%s", diff)
	}
	if len(lb.Listeners) != 1 || !strings.Contains(lb.Listeners[0], ":80->") {
		t.Errorf("LB listeners = %v, want one for port 80", lb.Listeners)
	}

	var second *corev1.LoadBalancerStatus
	writes := s.writesDuring(func() {
		var err error
		second, err = s.cloud.lb.EnsureLoadBalancer(s.ctx, clusterName, s.fresh(t, svc), nodes)
		if err != nil {
			t.Fatalf("second EnsureLoadBalancer: %v", err)
		}
	})
	if writes != 0 {
		t.Errorf("second EnsureLoadBalancer with nothing changed made %d cloud writes, want 0", writes)
	}
	if diff := cmp.Diff(first, second); diff != "" {
		t.Errorf("second EnsureLoadBalancer changed the status (-first +second):\n%s", diff)
	}
	if status, exists, err := s.cloud.lb.GetLoadBalancer(s.ctx, clusterName, s.fresh(t, svc)); err != nil || !exists || !cmp.Equal(first, status) {
		t.Errorf("GetLoadBalancer = %+v, %v, %v; want the ensured status", status, exists, err)
	}
	if n := len(s.target.Cloud.LoadBalancers()); n != 1 {
		t.Errorf("cloud holds %d load balancers after two Ensures, want 1", n)
	}
}

func testNodeChurn(t *testing.T, s *suite) {
	nodes := s.addNodes("churn", 3)
	svc := s.service(t, "churn", nil)
	s.ensure(t, svc, nodes[:2])
	before := s.onlyLB(t)

	s.update(t, svc, nodes)
	grown := s.onlyLB(t)
	if diff := cmp.Diff(s.memberIDs(t, nodes), grown.Members); diff != "" {
		t.Errorf("after a node joined, members (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(before.Listeners, grown.Listeners); diff != "" || grown.ID != before.ID {
		t.Errorf("a node joining changed more than members (id %s -> %s), listeners (-before +after):\n%s", before.ID, grown.ID, diff)
	}

	s.update(t, svc, nodes[1:])
	shrunk := s.onlyLB(t)
	if diff := cmp.Diff(s.memberIDs(t, nodes[1:]), shrunk.Members); diff != "" {
		t.Errorf("after a node left, members (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(before.Listeners, shrunk.Listeners); diff != "" || shrunk.ID != before.ID {
		t.Errorf("a node leaving changed more than members, listeners (-before +after):\n%s", diff)
	}
}

func testInvalidAnnotation(t *testing.T, s *suite) {
	if len(s.target.InvalidAnnotations) == 0 {
		t.Fatal("Target.InvalidAnnotations is empty: give at least one annotation the provider must reject")
	}
	nodes := s.addNodes("invalid", 1)
	i := 0
	for key, value := range s.target.InvalidAnnotations {
		i++
		t.Run(key, func(t *testing.T) {
			svc := s.service(t, fmt.Sprintf("invalid-%d", i), map[string]string{key: value})
			s.events()
			writes := s.writesDuring(func() {
				if _, err := s.cloud.lb.EnsureLoadBalancer(s.ctx, clusterName, svc, nodes); err == nil {
					t.Errorf("EnsureLoadBalancer with %s=%q succeeded; want an error", key, value)
				}
			})
			if writes != 0 {
				t.Errorf("EnsureLoadBalancer with an invalid annotation made %d cloud writes, want 0", writes)
			}
			if lbs := s.target.Cloud.LoadBalancers(); len(lbs) != 0 {
				t.Errorf("cloud holds load balancers after an invalid annotation: %+v", lbs)
			}
			events := strings.Join(s.events(), "\n")
			if !containsAll(events, "Warning", key) {
				t.Errorf("want a Warning Event naming %q; events:\n%s", key, events)
			}
		})
	}
}

func testDeleteIdempotent(t *testing.T, s *suite) {
	nodes := s.addNodes("del", 2)
	svc := s.service(t, "del", nil)
	s.ensure(t, svc, nodes)
	s.onlyLB(t)

	for i := range 2 {
		var err error
		for range s.target.MaxProvisioningPolls {
			if err = s.cloud.lb.EnsureLoadBalancerDeleted(s.ctx, clusterName, s.fresh(t, svc)); err == nil || !IsRetry(err) {
				break
			}
			s.target.Cloud.Advance()
		}
		if err != nil {
			t.Fatalf("EnsureLoadBalancerDeleted call %d: %v", i+1, err)
		}
		if lbs := s.target.Cloud.LoadBalancers(); len(lbs) != 0 {
			t.Fatalf("after EnsureLoadBalancerDeleted call %d the cloud still holds %+v", i+1, lbs)
		}
	}
	if _, exists, err := s.cloud.lb.GetLoadBalancer(s.ctx, clusterName, s.fresh(t, svc)); err != nil || exists {
		t.Errorf("GetLoadBalancer after delete = exists %v, %v; want false, nil", exists, err)
	}
}

package frameworktest

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"
)

// testCrashBeforeIDAnnotation: the CCM dies after the cloud made the LB
// and before the LB's ID reached the Service. The restarted CCM finds the
// LB by its owner, writes the ID back and makes no second LB: the whole
// run costs the cloud writes an uninterrupted one does.
func testCrashBeforeIDAnnotation(t *testing.T, h Harness, v variant) {
	// The uninterrupted run, in a cloud of its own.
	ref := newSuite(t, h, v)
	nodes := ref.addNodes("crash", 2)
	svc := ref.service(t, "crash", nil)
	want := ref.writesDuring(func() { ref.ensure(t, svc, nodes) })
	idKey := idAnnotationOf(ref.fresh(t, svc), svc, ref.onlyLB(t).ID)

	s := newSuite(t, h, v)
	nodes = s.addNodes("crash", 2)
	svc = s.service(t, "crash", nil)
	got := s.writesDuring(func() {
		failed := false
		s.kube.PrependReactor("patch", "services", func(k8stesting.Action) (bool, runtime.Object, error) {
			if failed {
				return false, nil, nil
			}
			failed = true
			return true, nil, errors.New("injected: the CCM died before it wrote the ID annotation")
		})
		if _, err := s.cloud.lb.EnsureLoadBalancer(s.ctx, clusterName, s.fresh(t, svc), nodes); err == nil && idKey != "" {
			t.Fatal("EnsureLoadBalancer succeeded though the ID annotation could not be written")
		}
		s.start(t) // the restarted CCM
		s.ensure(t, svc, nodes)
	})
	lb := s.onlyLB(t)
	if idKey != "" {
		if id := s.fresh(t, svc).Annotations[idKey]; id != lb.ID {
			t.Errorf("after the restart, annotation %s = %q; want the load balancer's ID %q written back", idKey, id, lb.ID)
		}
	}
	if got != want {
		t.Errorf("a create whose ID annotation was lost cost %d cloud writes; an uninterrupted one %d: the restart made extra writes", got, want)
	}
}

// idAnnotationOf returns the annotation the pipeline added to svc (now
// after) to record the load balancer id, "" when it records none.
func idAnnotationOf(after, before interface{ GetAnnotations() map[string]string }, id string) string {
	for k, v := range after.GetAnnotations() {
		if _, had := before.GetAnnotations()[k]; !had && v == id {
			return k
		}
	}
	return ""
}

// testCopiedIDAnnotation: a Service whose ID annotation names another
// Service's LB (copied with that Service's manifest, say) gets a Warning
// and takes nothing over: no cloud write, the LB unchanged, and deleting
// the copy leaves the LB alone.
func testCopiedIDAnnotation(t *testing.T, s *suite) {
	nodes := s.addNodes("owned", 3)
	owner := s.service(t, "owner", nil)
	s.ensure(t, owner, nodes[:2])
	lb := s.onlyLB(t)
	idKey := idAnnotationOf(s.fresh(t, owner), owner, lb.ID)
	if idKey == "" {
		t.Skip("the provider records no load balancer ID on the Service")
	}

	copied := s.service(t, "copy", map[string]string{idKey: lb.ID})
	s.events()
	writes := s.writesDuring(func() {
		if status, err := s.cloud.lb.EnsureLoadBalancer(s.ctx, clusterName, s.fresh(t, copied), nodes[2:]); err == nil {
			t.Errorf("EnsureLoadBalancer for a Service whose %s names Service %s's load balancer = %+v, nil; want an error", idKey, owner.Name, status)
		}
		if err := s.cloud.lb.UpdateLoadBalancer(s.ctx, clusterName, s.fresh(t, copied), nodes[2:]); err == nil {
			t.Errorf("UpdateLoadBalancer for a Service whose %s names another Service's load balancer succeeded; want an error", idKey)
		}
	})
	if writes != 0 {
		t.Errorf("a Service with a copied %s made %d cloud writes, want 0", idKey, writes)
	}
	if events := strings.Join(s.events(), "\n"); !strings.Contains(events, "Warning") {
		t.Errorf("want a Warning Event on the Service with the copied annotation; events:\n%s", events)
	}
	if diff := cmp.Diff(lb, s.onlyLB(t)); diff != "" {
		t.Errorf("the owner's load balancer changed (-before +after):\n%s", diff)
	}

	// Deleting the copy deletes nothing of the owner's.
	copied = s.fresh(t, copied)
	now := metav1.Now()
	copied.DeletionTimestamp = &now
	if err := s.cloud.lb.EnsureLoadBalancerDeleted(s.ctx, clusterName, copied); err != nil {
		t.Fatalf("EnsureLoadBalancerDeleted for the copy: %v", err)
	}
	if diff := cmp.Diff(lb, s.onlyLB(t)); diff != "" {
		t.Errorf("deleting the copy changed the owner's load balancer (-before +after):\n%s", diff)
	}
	if got := s.fresh(t, owner).Annotations[idKey]; got != lb.ID {
		t.Errorf("the owner's %s = %q, want %q", idKey, got, lb.ID)
	}
}

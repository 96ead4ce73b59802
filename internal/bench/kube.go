package main

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	cloudproviderapi "k8s.io/cloud-provider/api"

	"github.com/ccmkit/ccmkit/internal/cluster"
)

// pollEvery is how often waitFor checks its condition, at the least.
const pollEvery = 500 * time.Millisecond

// waitFor checks cond until it holds, every pollEvery or, when a check
// takes longer than a fifth of that, four times as long as the last one
// took: a check reads the simulator under its lock (LoadBalancers at
// 5,000 nodes and 1,000 load balancers is millions of members), and
// checking back to back would starve the CCM's calls it is measuring.
func waitFor(ctx context.Context, timeout time.Duration, cond wait.ConditionWithContextFunc) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		start := time.Now()
		done, err := cond(ctx)
		if done || err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting: %w", ctx.Err())
		case <-time.After(pacing(time.Since(start))):
		}
	}
}

// pacing is the pause after a check that took took.
func pacing(took time.Duration) time.Duration { return max(pollEvery, 4*took) }

func allInitialized(ctx context.Context, c *cluster.Cluster, want int) (bool, error) {
	nodes, err := c.Kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{ResourceVersion: "0"})
	if err != nil {
		return false, err
	}
	n := 0
	for _, node := range nodes.Items {
		if node.Spec.ProviderID != "" && !tainted(&node) {
			n++
		}
	}
	return n >= want, nil
}

func tainted(n *corev1.Node) bool {
	for _, t := range n.Spec.Taints {
		if t.Key == cloudproviderapi.TaintExternalCloudProvider {
			return true
		}
	}
	return false
}

func createServices(ctx context.Context, c *cluster.Cluster, n int) error {
	return forEachService(n, func(name string) error {
		_, err := c.Kube.CoreV1().Services("default").Create(ctx, &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
			Spec: corev1.ServiceSpec{
				Type:     corev1.ServiceTypeLoadBalancer,
				Selector: map[string]string{"app": name},
				Ports:    []corev1.ServicePort{{Protocol: corev1.ProtocolTCP, Port: 80, TargetPort: intstr.FromInt32(8080)}},
			},
		}, metav1.CreateOptions{})
		return err
	})
}

// deleteServices deletes the Services createServices made.
func deleteServices(ctx context.Context, c *cluster.Cluster, n int) error {
	return forEachService(n, func(name string) error {
		err := c.Kube.CoreV1().Services("default").Delete(ctx, name, metav1.DeleteOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return err
	})
}

// forEachService calls fn for the names of n Services, svc-0 to
// svc-<n-1>, 16 at a time, and returns one of the errors.
func forEachService(n int, fn func(name string) error) error {
	var wg sync.WaitGroup
	errs := make(chan error, n)
	sem := make(chan struct{}, 16)
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			if err := fn("svc-" + strconv.Itoa(i)); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}

func allIngress(ctx context.Context, c *cluster.Cluster, want int) (bool, error) {
	svcs, err := c.Kube.CoreV1().Services("default").List(ctx, metav1.ListOptions{ResourceVersion: "0"})
	if err != nil {
		return false, err
	}
	n := 0
	for _, s := range svcs.Items {
		if s.Spec.Type == corev1.ServiceTypeLoadBalancer && len(s.Status.LoadBalancer.Ingress) > 0 {
			n++
		}
	}
	return n >= want, nil
}

func memberEverywhere(c *cluster.Cluster, id string, lbs int) (bool, error) {
	n := 0
	for _, lb := range c.Sim.LoadBalancers() {
		for _, m := range lb.Members {
			if m == id {
				n++
				break
			}
		}
	}
	return n >= lbs, nil
}

// memberNowhere reports whether the instance id is behind no LB.
func memberNowhere(c *cluster.Cluster, id string) bool {
	for _, lb := range c.Sim.LoadBalancers() {
		for _, m := range lb.Members {
			if m == id {
				return false
			}
		}
	}
	return true
}

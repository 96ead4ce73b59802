package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	cloudproviderapi "k8s.io/cloud-provider/api"

	"github.com/ccmkit/ccmkit/internal/cluster"
)

// scenario is one measured step.
type scenario struct {
	Name    string         `json:"name"`
	Seconds float64        `json:"seconds"`
	Calls   map[string]int `json:"calls"`
	Total   int            `json:"totalCalls"`
	Writes  int            `json:"writes"`
	// PerHour is the idle scenario's rate, extrapolated from its window.
	PerHour *float64 `json:"callsPerHour,omitempty"`
}

type results struct {
	Scenarios []scenario `json:"scenarios"`
	// PeakRSSBytes is the CCM process's peak resident memory (VmHWM).
	PeakRSSBytes int64 `json:"peakRSSBytes"`
}

func run(ctx context.Context, s settings) (*results, error) {
	p, ok := cluster.Lookup(s.Cloud)
	if !ok {
		return nil, fmt.Errorf("unknown cloud %q", s.Cloud)
	}
	fmt.Printf("==> starting control plane and %s simulator (latency %s per call)\n", p.Name, s.Latency)
	c, err := cluster.Start(ctx, cluster.Options{Provider: p, Sim: cluster.SimOptions{Latency: s.Latency}})
	if err != nil {
		return nil, err
	}
	defer func() { c.Stop(); _ = os.RemoveAll(c.WorkDir) }()
	ccm, err := c.StartCCM("ccm", "--instance-cache-ttl=30s", "--node-status-update-frequency="+s.AddressRefresh.String())
	if err != nil {
		return nil, err
	}
	res := &results{}
	m := meter{c: c}

	fmt.Printf("==> (a) %d nodes join at once\n", s.Nodes)
	a, err := m.measure(ctx, fmt.Sprintf("(a) %d nodes join", s.Nodes), func() error {
		if _, err := c.AddNodes(ctx, "node", s.Nodes, 0); err != nil {
			return err
		}
		return waitFor(ctx, 30*time.Minute, func(ctx context.Context) (bool, error) { return allInitialized(ctx, c, s.Nodes) })
	})
	if err != nil {
		return nil, err
	}
	res.Scenarios = append(res.Scenarios, a)

	fmt.Printf("==> (b) %d LoadBalancer Services\n", s.Services)
	b, err := m.measure(ctx, fmt.Sprintf("(b) %d LoadBalancer Services", s.Services), func() error {
		if err := createServices(ctx, c, s.Services); err != nil {
			return err
		}
		return waitFor(ctx, 30*time.Minute, func(ctx context.Context) (bool, error) { return allIngress(ctx, c, s.Services) })
	})
	if err != nil {
		return nil, err
	}
	res.Scenarios = append(res.Scenarios, b)

	fmt.Printf("==> (c) idle for %s (address refresh every %s)\n", s.IdleWindow, s.AddressRefresh)
	idle, err := m.measure(ctx, fmt.Sprintf("(c) idle, %d nodes + %d LBs", s.Nodes, s.Services), func() error {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(s.IdleWindow):
			return nil
		}
	})
	if err != nil {
		return nil, err
	}
	perHour := float64(idle.Total) * float64(time.Hour) / float64(s.IdleWindow)
	idle.PerHour = &perHour
	res.Scenarios = append(res.Scenarios, idle)

	fmt.Printf("==> (d) one node joins %d LBs\n", s.Services)
	d, err := m.measure(ctx, fmt.Sprintf("(d) 1 node joins %d LBs", s.Services), func() error {
		ids, err := c.AddNodes(ctx, "late", 1, 0)
		if err != nil {
			return err
		}
		return waitFor(ctx, 30*time.Minute, func(ctx context.Context) (bool, error) { return memberEverywhere(c, ids[0], s.Services) })
	})
	if err != nil {
		return nil, err
	}
	res.Scenarios = append(res.Scenarios, d)

	res.PeakRSSBytes, err = peakRSS(ccm.PID())
	if err != nil {
		return nil, err
	}
	return res, nil
}

// meter measures the time and the cloud calls a step costs.
type meter struct{ c *cluster.Cluster }

func (m meter) measure(_ context.Context, name string, step func() error) (scenario, error) {
	before, writes := m.c.Sim.Stats(), m.c.Sim.Writes()
	start := time.Now()
	if err := step(); err != nil {
		return scenario{}, fmt.Errorf("%s: %w", name, err)
	}
	sc := scenario{Name: name, Seconds: time.Since(start).Seconds(), Calls: map[string]int{}, Writes: m.c.Sim.Writes() - writes}
	for op, n := range m.c.Sim.Stats() {
		if d := n - before[op]; d > 0 {
			sc.Calls[op] = d
			sc.Total += d
		}
	}
	return sc, nil
}

func waitFor(ctx context.Context, timeout time.Duration, cond wait.ConditionWithContextFunc) error {
	return wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, timeout, true, cond)
}

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
	var wg sync.WaitGroup
	errs := make(chan error, n)
	sem := make(chan struct{}, 16)
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			name := "svc-" + strconv.Itoa(i)
			_, err := c.Kube.CoreV1().Services("default").Create(ctx, &corev1.Service{
				ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
				Spec: corev1.ServiceSpec{
					Type:     corev1.ServiceTypeLoadBalancer,
					Selector: map[string]string{"app": name},
					Ports:    []corev1.ServicePort{{Protocol: corev1.ProtocolTCP, Port: 80, TargetPort: intstr.FromInt32(8080)}},
				},
			}, metav1.CreateOptions{})
			if err != nil {
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

// peakRSS reads VmHWM, the process's peak resident set size.
func peakRSS(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("reading the CCM's peak RSS: %w", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb * 1024, err
		}
	}
	return 0, fmt.Errorf("no VmHWM in /proc/%d/status", pid)
}

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
	apierrors "k8s.io/apimachinery/pkg/api/errors"
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
	// Warnings counts the Warning Events raised during the step (repeats
	// included): a healthy cloud doing its job should raise none.
	Warnings int `json:"warningEvents"`
	// PerHour is the idle scenario's rate, extrapolated from its window.
	PerHour *float64 `json:"callsPerHour,omitempty"`
	// PeakRSSBytes is the CCM's peak RSS (VmHWM) so far, read at the end
	// of the step: where the peak happened.
	PeakRSSBytes int64 `json:"peakRSSBytes,omitempty"`
}

type results struct {
	Scenarios []scenario `json:"scenarios"`
	// PeakRSSBytes is the CCM process's peak resident memory (VmHWM).
	PeakRSSBytes int64 `json:"peakRSSBytes"`
	// PeakAnonBytes and PeakFileBytes are the largest anonymous and
	// file-backed parts of its RSS, sampled every 100 ms (see memSampler).
	PeakAnonBytes int64 `json:"peakAnonBytes"`
	PeakFileBytes int64 `json:"peakFileBytes"`
	// CPUSeconds is the CPU time (user and system) the CCM process used,
	// start-up included: what a lower memory use may cost in garbage
	// collection.
	CPUSeconds float64 `json:"cpuSeconds"`
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
	// Our own secure port (later flags win), to fetch heap profiles.
	port, err := cluster.FreePort()
	if err != nil {
		return nil, err
	}
	ccm, err := c.StartCCMWithEnv("ccm", runtimeEnv(), "--instance-cache-ttl=30s", "--node-status-update-frequency="+s.AddressRefresh.String(),
		"--secure-port="+strconv.Itoa(port))
	if err != nil {
		return nil, err
	}
	res := &results{}
	sampler := startMemSampler(ccm.PID(), 100*time.Millisecond)
	m := meter{c: c, pid: ccm.PID()}
	if s.HeapProfiles != "" {
		m.profile = func(name string) error { return writeHeapProfile(ctx, c, port, s.HeapProfiles, name) }
	}

	fmt.Printf("==> (a) %d nodes join at once\n", s.Nodes)
	var nodeIDs []string
	a, err := m.measure(ctx, fmt.Sprintf("(a) %d nodes join", s.Nodes), func() error {
		var err error
		if nodeIDs, err = c.AddNodes(ctx, "node", s.Nodes, 0); err != nil {
			return err
		}
		if err := postImages(ctx, c, "node", s.Nodes, s.NodeImages); err != nil {
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
	const late = "late-0"
	var lateID string
	d, err := m.measure(ctx, fmt.Sprintf("(d) 1 node joins %d LBs", s.Services), func() error {
		ids, err := c.AddNodes(ctx, "late", 1, 0)
		if err != nil {
			return err
		}
		lateID = ids[0]
		return waitFor(ctx, 30*time.Minute, func(ctx context.Context) (bool, error) {
			if ok, err := allInitialized(ctx, c, s.Nodes+1); !ok || err != nil {
				return false, err
			}
			return memberEverywhere(c, lateID, s.Services)
		})
	})
	if err != nil {
		return nil, err
	}
	res.Scenarios = append(res.Scenarios, d)

	// A node leaves as a real removal does: its instance is deleted in the
	// cloud, then its Node (what cloud-node-lifecycle would do once it saw
	// the instance gone).
	fmt.Printf("==> (e) one node leaves %d LBs\n", s.Services)
	e, err := m.measure(ctx, fmt.Sprintf("(e) 1 node leaves %d LBs", s.Services), func() error {
		c.Sim.DeleteInstance(lateID)
		if k := c.Kubelet(late); k != nil {
			k.Stop()
		}
		if err := c.Kube.CoreV1().Nodes().Delete(ctx, late, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
		return waitFor(ctx, 30*time.Minute, func(context.Context) (bool, error) { return memberNowhere(c, lateID), nil })
	})
	if err != nil {
		return nil, err
	}
	res.Scenarios = append(res.Scenarios, e)

	// A VM is deleted under its Node: its kubelet goes silent, and
	// kube-controller-manager marks the Node NotReady (kubetest's
	// NotReady, at once: its --node-monitor-grace-period is not the
	// CCM's), then the CCM's node lifecycle controller, which asks about
	// every NotReady Node each --node-monitor-period (5 s), finds the VM
	// gone and deletes the Node. The seconds are the CCM's, and the calls
	// the instance lists of those periods (and the load balancers' update
	// for the node that left).
	fmt.Printf("==> (f) one VM deleted under its Node\n")
	f, err := m.measure(ctx, "(f) 1 VM deleted, its Node goes", func() error {
		c.Sim.DeleteInstance(nodeIDs[0])
		if err := c.Kubelet("node-0").NotReady(ctx); err != nil {
			return err
		}
		return waitFor(ctx, 30*time.Minute, func(ctx context.Context) (bool, error) {
			_, err := c.Kube.CoreV1().Nodes().Get(ctx, "node-0", metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return true, nil
			}
			return false, err
		})
	})
	if err != nil {
		return nil, err
	}
	res.Scenarios = append(res.Scenarios, f)

	res.PeakAnonBytes, res.PeakFileBytes = sampler.Stop()
	res.PeakRSSBytes, err = peakRSS(ccm.PID())
	if err != nil {
		return nil, err
	}
	if res.CPUSeconds, err = cpuSeconds(ccm.PID()); err != nil {
		return nil, err
	}
	return res, nil
}

// meter measures the time, the cloud calls and the CCM's peak RSS a step
// costs.
type meter struct {
	c   *cluster.Cluster
	pid int
	// profile, if set, saves the CCM's heap profile after each step.
	profile func(name string) error
}

func (m meter) measure(ctx context.Context, name string, step func() error) (scenario, error) {
	before, writes := m.c.Sim.Stats(), m.c.Sim.Writes()
	warnings, seen, err := warningEvents(ctx, m.c)
	if err != nil {
		return scenario{}, err
	}
	start := time.Now()
	if err := step(); err != nil {
		return scenario{}, fmt.Errorf("%s: %w", name, err)
	}
	sc := scenario{Name: name, Seconds: time.Since(start).Seconds(), Calls: map[string]int{}, Writes: m.c.Sim.Writes() - writes}
	after, seenAfter, err := warningEvents(ctx, m.c)
	if err != nil {
		return scenario{}, err
	}
	sc.Warnings = after - warnings
	for text, n := range seenAfter { // what they said, for the one reading the figures
		if d := n - seen[text]; d > 0 {
			fmt.Fprintf(os.Stderr, "%s: %d Warning Event(s): %s\n", name, d, text)
		}
	}
	for op, n := range m.c.Sim.Stats() {
		if d := n - before[op]; d > 0 {
			sc.Calls[op] = d
			sc.Total += d
		}
	}
	if sc.PeakRSSBytes, err = peakRSS(m.pid); err != nil {
		return scenario{}, err
	}
	if m.profile != nil {
		if err := m.profile(name); err != nil {
			return scenario{}, fmt.Errorf("%s: heap profile: %w", name, err)
		}
	}
	return sc, nil
}

// warningEvents counts the Warning Events in the cluster, repeats
// included, in all and by reason and message.
func warningEvents(ctx context.Context, c *cluster.Cluster) (int, map[string]int, error) {
	list, err := c.Kube.CoreV1().Events(metav1.NamespaceAll).List(ctx, metav1.ListOptions{FieldSelector: "type=" + corev1.EventTypeWarning})
	if err != nil {
		return 0, nil, fmt.Errorf("listing Warning Events: %w", err)
	}
	n, by := 0, map[string]int{}
	for _, e := range list.Items {
		c := int(max(e.Count, 1))
		n += c
		by[e.Reason+": "+e.Message] += c
	}
	return n, by, nil
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

// cpuSeconds reads the process's user and system CPU time from
// /proc/<pid>/stat (fields 14 and 15, in clock ticks of 1/100 s: Linux's
// USER_HZ on every architecture Go supports).
func cpuSeconds(pid int) (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("reading the CCM's CPU time: %w", err)
	}
	// The command name (field 2) may hold spaces: count from its ")".
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0, fmt.Errorf("unexpected /proc/%d/stat: %q", pid, b)
	}
	f := strings.Fields(string(b)[i+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("unexpected /proc/%d/stat: %q", pid, b)
	}
	var ticks int64
	for _, s := range f[11:13] { // utime, stime: fields 14 and 15
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("unexpected /proc/%d/stat: %w", pid, err)
		}
		ticks += n
	}
	return float64(ticks) / 100, nil
}

// runtimeEnv is the Go runtime's settings from the bench's environment
// (GOGC, GOMEMLIMIT, GODEBUG), passed on to the CCM: GODEBUG=gctrace=1
// shows its heap over the run in its log, GOGC=100 measures Go's default.
func runtimeEnv() map[string]string {
	env := map[string]string{}
	for _, k := range []string{"GOGC", "GOMEMLIMIT", "GODEBUG"} {
		if v, ok := os.LookupEnv(k); ok {
			env[k] = v
		}
	}
	return env
}

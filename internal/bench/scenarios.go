package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ccmkit/ccmkit/internal/cluster"
)

// scenario is one measured step.
type scenario struct {
	Name    string         `json:"name"`
	Seconds float64        `json:"seconds"`
	Calls   map[string]int `json:"calls"`
	Total   int            `json:"totalCalls"`
	Writes  int            `json:"writes"`
	// Warnings counts the Warning Events the CCM raised during the step
	// (repeats included; the control plane's are not counted): a healthy
	// cloud doing its job should raise none.
	Warnings int `json:"warningEvents"`
	// Errors counts the lines the CCM logged at error level during the
	// step: a healthy cloud doing its job should make none.
	Errors int `json:"errorLogLines"`
	// PerHour is the idle scenario's rate, extrapolated from its window.
	PerHour *float64 `json:"callsPerHour,omitempty"`
	// PeakRSSBytes is the CCM's peak RSS (VmHWM) so far, read at the end
	// of the step: where the peak happened.
	PeakRSSBytes int64 `json:"peakRSSBytes,omitempty"`
	// Heap is what held the CCM's heap at the step's peak.
	Heap *heapAtPeak `json:"heapAtPeak,omitempty"`
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
	name, _, _ := strings.Cut(s.Cloud, "+")
	p, ok := cluster.Lookup(name)
	if !ok {
		return nil, fmt.Errorf("unknown cloud %q", s.Cloud)
	}
	fmt.Printf("==> starting control plane and %s simulator (latency %s per call)\n", p.Name, s.Latency)
	c, err := cluster.Start(ctx, cluster.Options{Provider: p, Sim: cluster.SimOptions{Latency: s.Latency}, CCMBinary: s.CCMBinary})
	if err != nil {
		return nil, err
	}
	defer func() { c.Stop(); _ = os.RemoveAll(c.WorkDir) }()
	// Our own secure port (later flags win), to fetch heap profiles.
	port, err := cluster.FreePort()
	if err != nil {
		return nil, err
	}
	// The local cluster's short periods are for tests; the bench runs
	// upstream's defaults (--node-monitor-period 5s) and ccmkit's
	// (--instance-cache-ttl 30s), but for the address refresh.
	if err := dropFromPageCache(c.CCMBinary()); err != nil {
		return nil, err
	}
	ccm, err := c.StartCCMWithEnv("ccm", s.CCMEnv, "--node-monitor-period=5s", "--instance-cache-ttl=30s", "--node-status-update-frequency="+s.AddressRefresh.String(),
		"--secure-port="+strconv.Itoa(port))
	if err != nil {
		return nil, err
	}
	res := &results{}
	profiler, err := newHeapProfiler(c, port)
	if err != nil {
		return nil, err
	}
	peaks := &peakProfiles{ctx: ctx, profiler: profiler}
	sampler := startMemSampler(ccm.PID(), 100*time.Millisecond, peaks.onPeak)
	m := meter{c: c, pid: ccm.PID(), sampler: sampler, peaks: peaks, profileDir: s.HeapProfiles, log: ccm.LogPath}

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

	// Deleting is where some clouds' CCMs peak: each delete looks up what
	// the load balancer was given (addresses, groups, firewalls).
	fmt.Printf("==> (g) %d LoadBalancer Services deleted\n", s.Services)
	g, err := m.measure(ctx, fmt.Sprintf("(g) %d Services deleted", s.Services), func() error {
		if err := deleteServices(ctx, c, s.Services); err != nil {
			return err
		}
		return waitFor(ctx, 30*time.Minute, func(context.Context) (bool, error) { return len(c.Sim.LoadBalancers()) == 0, nil })
	})
	if err != nil {
		return nil, err
	}
	res.Scenarios = append(res.Scenarios, g)

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

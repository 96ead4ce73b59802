package soak

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/util/retry"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
	"github.com/ccmkit/ccmkit/internal/cluster"
)

// heartbeat is the kubelet stand-ins' heartbeat, as the e2e suite's.
const heartbeat = 2 * time.Second

// driver applies a plan's operations to a cluster and records what it did.
type driver struct {
	c    *cluster.Cluster
	reps *replicas

	mu     sync.Mutex
	record Record
	// faults counts the faults the cloud injected, by kind.
	faults map[string]*atomic.Int64
	// removers take out the faults still injected.
	removers []func()
	// armed are the mid-reconcile kills armed so far, each true once
	// carried out.
	armed []*atomic.Bool
}

func newDriver(c *cluster.Cluster, reps *replicas) *driver {
	return &driver{c: c, reps: reps, faults: map[string]*atomic.Int64{}, record: Record{
		VMs: map[string]string{}, VMsDeleted: map[string]bool{}, VMsShutdown: map[string]bool{}, NodesDeleted: map[string]bool{},
	}}
}

// inject adds f to the cloud, counting each request it fails (or delays)
// under kind; the fault stays until removeFaults unless removed sooner.
func (d *driver) inject(kind string, f simkit.Fault) (remove func()) {
	d.mu.Lock()
	n, ok := d.faults[kind]
	if !ok {
		n = new(atomic.Int64)
		d.faults[kind] = n
	}
	d.mu.Unlock()
	do := f.Do
	f.Do = func() {
		n.Add(1)
		if do != nil {
			do()
		}
	}
	remove = d.c.Sim.Inject(f)
	d.mu.Lock()
	d.removers = append(d.removers, remove)
	d.mu.Unlock()
	return remove
}

// removeFaults takes every injected fault out.
func (d *driver) removeFaults() {
	d.mu.Lock()
	removers := d.removers
	d.removers = nil
	d.mu.Unlock()
	for _, r := range removers {
		r()
	}
}

// faultCounts are the faults injected so far, by kind.
func (d *driver) faultCounts() map[string]int64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := map[string]int64{}
	for k, n := range d.faults {
		out[k] = n.Load()
	}
	return out
}

// background injects the faults of the whole op phase at their rates.
func (d *driver) background(cfg Config) {
	if cfg.Rate5xx > 0 {
		d.inject("5xx", simkit.Fault{Status: http.StatusInternalServerError, Rate: cfg.Rate5xx / 2})
		d.inject("5xx", simkit.Fault{Status: http.StatusServiceUnavailable, Rate: cfg.Rate5xx / 2})
	}
	if cfg.Rate429 > 0 {
		d.inject("429", simkit.Fault{Status: http.StatusTooManyRequests, RetryAfter: time.Second, Rate: cfg.Rate429})
	}
	if cfg.RateResets > 0 {
		d.inject("reset", simkit.Fault{Reset: true, Rate: cfg.RateResets})
	}
	if cfg.RateLatency > 0 {
		d.inject("latency", simkit.Fault{Delay: cfg.LatencyDelay, Rate: cfg.RateLatency})
	}
}

// apply carries out one operation.
func (d *driver) apply(ctx context.Context, op Op) error {
	switch op.Kind {
	case CreateService:
		return d.createService(ctx, op)
	case NodeJoin, NodeLeave, VMDelete, VMShutdown:
		return d.node(ctx, op)
	case Storm429:
		return d.window(ctx, op, "429-storm", simkit.Fault{Status: http.StatusTooManyRequests, RetryAfter: time.Second})
	case LatencySpike:
		return d.window(ctx, op, "latency-spike", simkit.Fault{Delay: op.Duration / 2, Rate: op.Rate})
	case Window401:
		return d.window(ctx, op, "401", simkit.Fault{Status: http.StatusUnauthorized})
	case KillNow:
		d.killNow(ctx)
		return nil
	case KillMid:
		d.armKill(ctx, op.Method)
		return nil
	case DeleteService:
		return d.c.Kube.CoreV1().Services(d.c.Namespace).Delete(ctx, op.Service, metav1.DeleteOptions{})
	}
	return d.updateService(ctx, op.Service, func(svc *corev1.Service) { changeService(svc, op) })
}

// window injects f for the operation's duration, while the next
// operations go on: they are what makes the CCM call the cloud.
func (d *driver) window(_ context.Context, op Op, kind string, f simkit.Fault) error {
	time.AfterFunc(op.Duration, d.inject(kind, f))
	return nil
}

// armKill kills the leader as its next request with method reaches the
// cloud, which then still serves it: the crash between a write and
// whatever the CCM meant to do next (write the ID annotation...). A write
// made while no live leader is known (a new one not yet seen in its log,
// the last one already killed) leaves the kill armed for the next one;
// flushKills carries out the kills still armed when the operations end.
func (d *driver) armKill(ctx context.Context, method string) {
	var fired atomic.Bool
	var remove func()
	var ready sync.WaitGroup
	ready.Add(1)
	remove = d.c.Sim.Inject(simkit.Fault{Op: method, Do: func() {
		if !fired.CompareAndSwap(false, true) {
			return
		}
		if !d.reps.killLeader(ctx, 0) {
			fired.Store(false)
			return
		}
		ready.Wait()
		go remove()
	}})
	d.mu.Lock()
	d.removers = append(d.removers, remove)
	d.armed = append(d.armed, &fired)
	d.mu.Unlock()
	ready.Done()
}

// flushKills carries out, as kills now, the mid-reconcile kills still
// armed: every planned kill happens.
func (d *driver) flushKills(ctx context.Context) {
	d.mu.Lock()
	armed := d.armed
	d.armed = nil
	d.mu.Unlock()
	for _, fired := range armed {
		if fired.CompareAndSwap(false, true) {
			d.killNow(ctx)
		}
	}
}

// killNow kills the leader (waiting for one first) and waits for the
// next: a kill every few operations would otherwise leave the cluster
// without a leader most of the time.
func (d *driver) killNow(ctx context.Context) {
	d.reps.waitForLeader(ctx, 30*time.Second)
	if d.reps.killLeader(ctx, 30*time.Second) {
		d.reps.waitForLeader(ctx, 30*time.Second)
	}
}

func (d *driver) createService(ctx context.Context, op Op) error {
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: op.Service, Namespace: d.c.Namespace},
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeLoadBalancer,
			Selector: map[string]string{"app": op.Service},
			Ports:    servicePortsOf(op.Ports),
		},
	}
	_, err := d.c.Kube.CoreV1().Services(d.c.Namespace).Create(ctx, svc, metav1.CreateOptions{})
	return err
}

func servicePortsOf(ports []Port) []corev1.ServicePort {
	out := make([]corev1.ServicePort, 0, len(ports))
	for i, p := range ports {
		out = append(out, corev1.ServicePort{
			Name: fmt.Sprintf("p%d", i), Protocol: corev1.Protocol(p.Protocol),
			Port: p.Port, TargetPort: intstr.FromInt32(8080),
		})
	}
	return out
}

// changeService edits svc as op says.
func changeService(svc *corev1.Service, op Op) {
	switch op.Kind {
	case ChangePorts:
		svc.Spec.Ports = servicePortsOf(op.Ports)
	case SetAnnotation, BreakAnnotation, FixAnnotation:
		if svc.Annotations == nil {
			svc.Annotations = map[string]string{}
		}
		if op.Value == "" {
			delete(svc.Annotations, op.Key)
		} else {
			svc.Annotations[op.Key] = op.Value
		}
	case TrafficPolicy:
		svc.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicy(op.Policy)
		if op.Policy != "Local" {
			svc.Spec.HealthCheckNodePort = 0
		}
	case SourceRanges:
		svc.Spec.LoadBalancerSourceRanges = op.Ranges
	case ToClusterIP:
		svc.Spec.Type = corev1.ServiceTypeClusterIP
		svc.Spec.ExternalTrafficPolicy, svc.Spec.HealthCheckNodePort = "", 0
		svc.Spec.LoadBalancerSourceRanges, svc.Spec.AllocateLoadBalancerNodePorts = nil, nil
		for i := range svc.Spec.Ports {
			svc.Spec.Ports[i].NodePort = 0
		}
	case ToLoadBalancer:
		svc.Spec.Type = corev1.ServiceTypeLoadBalancer
	}
}

func (d *driver) updateService(ctx context.Context, name string, edit func(*corev1.Service)) error {
	services := d.c.Kube.CoreV1().Services(d.c.Namespace)
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		svc, err := services.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		edit(svc)
		_, err = services.Update(ctx, svc, metav1.UpdateOptions{})
		return err
	})
}

// node carries out a Node or VM operation, recording it first: whatever
// the CCM does next is judged against the record.
func (d *driver) node(ctx context.Context, op Op) error {
	if op.Kind == NodeJoin {
		id, err := d.c.AddNode(ctx, op.Node, heartbeat)
		d.mu.Lock()
		d.record.VMs[op.Node] = id
		d.mu.Unlock()
		return err
	}
	d.mu.Lock()
	id := d.record.VMs[op.Node]
	switch op.Kind {
	case NodeLeave:
		d.record.NodesDeleted[op.Node] = true
		d.record.VMsDeleted[op.Node] = true
	case VMDelete:
		d.record.VMsDeleted[op.Node] = true
	case VMShutdown:
		d.record.VMsShutdown[op.Node] = true
	}
	d.mu.Unlock()
	kubelet := d.c.Kubelet(op.Node)
	if kubelet == nil {
		return fmt.Errorf("%s: no kubelet for Node %s (it never joined)", op.Kind, op.Node)
	}
	switch op.Kind {
	case NodeLeave:
		kubelet.Stop()
		if err := d.c.Kube.CoreV1().Nodes().Delete(ctx, op.Node, metav1.DeleteOptions{}); err != nil {
			return err
		}
		d.c.Sim.DeleteInstance(id)
		return nil
	case VMDelete:
		d.c.Sim.DeleteInstance(id)
	case VMShutdown:
		d.c.Sim.ShutdownInstance(id)
	}
	// The kubelet goes silent and the Node NotReady: the CCM's node
	// lifecycle controller acts on NotReady Nodes only.
	return kubelet.NotReady(ctx)
}

// nodeDeleted records a Node deletion seen by the informer.
func (d *driver) nodeDeleted(name string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.record.NodeDeletions = append(d.record.NodeDeletions, name)
}

// snapshotRecord is a copy of the record.
func (d *driver) snapshotRecord() Record {
	d.mu.Lock()
	defer d.mu.Unlock()
	r := d.record
	r.VMs, r.VMsDeleted, r.VMsShutdown, r.NodesDeleted = maps.Clone(r.VMs), maps.Clone(r.VMsDeleted), maps.Clone(r.VMsShutdown), maps.Clone(r.NodesDeleted)
	r.NodeDeletions = append([]string(nil), r.NodeDeletions...)
	return r
}

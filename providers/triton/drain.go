package triton

import (
	"context"
	"fmt"
	"maps"
	"time"

	"github.com/joyent/triton-go/compute"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/framework/providerid"
)

// DrainControllerName names the CNS drain controller for --controllers.
const DrainControllerName = "triton-cns-drain"

// CNS's values of triton.cns.status (triton-cns docs/metadata.md): a
// machine whose status is not up is in no service record (its instance
// records stay).
const (
	cnsStatusUp   = "up"
	cnsStatusDown = "down"
)

// drainRecheck is how soon a node that should be drained, but whose
// machine the load balancers have not tagged yet, is looked at again.
const drainRecheck = time.Minute

// drainController takes the nodes CNS should not send traffic to, NotReady
// or cordoned (spec.unschedulable), out of every CNS service, which is
// what CNS's health amounts to: it sets triton.cns.status=down on their
// machines, and up again when they are Ready and schedulable. Only the
// machines the load balancers manage (tagged k8s-cluster=<cluster>) are
// touched, and only on a change: a node is looked at when its health
// changes, in the list of the cluster's machines the load balancers share
// (so a thousand nodes joining, or a restart, cost a list, not a GET
// each), and written when its machine's status differs.
type drainController struct {
	api      *api
	machines *clusterMachines
	codec    providerid.Codec
	nodes    corelisters.NodeLister
	synced   cache.InformerSynced
	queue    workqueue.TypedRateLimitingInterface[string]
	// recheck is drainRecheck (tests shorten it).
	recheck time.Duration
}

// drainControllerFor is the framework.Controller of the drain controller.
func (p *Provider) drainControllerFor() framework.Controller {
	return framework.Controller{
		Name: DrainControllerName,
		Run: func(ctx context.Context, env *framework.Env) error {
			lbs, ok := p.lb.(*loadBalancers)
			if p.api == nil || !ok {
				return nil
			}
			ctx = klog.NewContext(ctx, klog.FromContext(ctx).WithValues("controller", DrainControllerName))
			c, err := newDrainController(env, p.api, lbs.machines, framework.Codec(p))
			if err != nil {
				return err
			}
			env.Informers.Start(ctx.Done())
			return c.run(ctx)
		},
	}
}

// newDrainController registers the controller's Node event handler.
func newDrainController(env *framework.Env, a *api, machines *clusterMachines, codec providerid.Codec) (*drainController, error) {
	nodes := env.Informers.Core().V1().Nodes()
	c := &drainController{
		api: a, machines: machines, codec: codec,
		nodes: nodes.Lister(), synced: nodes.Informer().HasSynced,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: DrainControllerName}),
		recheck: drainRecheck,
	}
	_, err := nodes.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: c.enqueue,
		UpdateFunc: func(oldObj, newObj any) {
			o, okOld := oldObj.(*corev1.Node)
			n, okNew := newObj.(*corev1.Node)
			if !okOld || !okNew || drained(o) != drained(n) || o.Spec.ProviderID != n.Spec.ProviderID {
				c.enqueue(newObj)
			}
		},
	})
	if err != nil {
		return nil, fmt.Errorf("watching Nodes: %w", err)
	}
	return c, nil
}

func (c *drainController) enqueue(obj any) {
	if n, ok := obj.(*corev1.Node); ok {
		c.queue.Add(n.Name)
	}
}

// run works the queue until ctx is done.
func (c *drainController) run(ctx context.Context) error {
	defer c.queue.ShutDown()
	if !cache.WaitForCacheSync(ctx.Done(), c.synced) {
		return ctx.Err()
	}
	go wait.UntilWithContext(ctx, c.work, time.Second)
	<-ctx.Done()
	return nil
}

func (c *drainController) work(ctx context.Context) {
	for {
		name, quit := c.queue.Get()
		if quit {
			return
		}
		err := c.sync(ctx, name)
		switch {
		case err != nil:
			klog.FromContext(ctx).Error(err, "Draining node", "node", name)
			c.queue.AddRateLimited(name)
		default:
			c.queue.Forget(name)
		}
		c.queue.Done(name)
	}
}

// drained reports whether CNS should send a node no traffic: it is
// cordoned, or its Ready condition is False or Unknown (a node that has
// not reported one yet, just registered, is not drained).
func drained(n *corev1.Node) bool {
	if n.Spec.Unschedulable {
		return true
	}
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status != corev1.ConditionTrue
		}
	}
	return false
}

// sync makes the node's machine's triton.cns.status match the node.
func (c *drainController) sync(ctx context.Context, name string) error {
	n, err := c.nodes.Get(name)
	if err != nil || n.Spec.ProviderID == "" {
		return nil //nolint:nilerr // a Node deleted, or not initialized yet (it is queued again when it is)
	}
	id, err := c.codec.Parse(n.Spec.ProviderID)
	if err != nil {
		return nil //nolint:nilerr // not a Triton machine: nothing to drain
	}
	down := drained(n)
	m, err := c.machines.get(ctx, id.Value)
	if err != nil {
		return fmt.Errorf("looking for machine %s among the cluster's: %w", id.Value, err)
	}
	if m == nil {
		// Not tagged with the cluster (or gone): a load balancer may tag
		// it later.
		if down {
			c.queue.AddAfter(name, c.recheck)
		}
		return nil
	}
	status := m.Metadata[cnsStatusMetadata]
	want := ""
	switch {
	case down && status != cnsStatusDown:
		want = cnsStatusDown
	case !down && status == cnsStatusDown:
		want = cnsStatusUp
	default:
		return nil
	}
	klog.FromContext(ctx).Info("Setting the node's CNS status", "node", name, "machine", m.ID, "status", want)
	md, err := one(ctx, "machines.metadata.update", func(ctx context.Context) (map[string]string, error) {
		return c.api.Compute().Instances().UpdateMetadata(ctx, &compute.UpdateMetadataInput{ID: m.ID, Metadata: map[string]string{cnsStatusMetadata: want}})
	})
	switch {
	case notFound(err) || machineGone(err):
		c.machines.forget(m.ID)
	case err != nil:
		return fmt.Errorf("setting %s=%s on machine %s: %w", cnsStatusMetadata, want, m.ID, err)
	default:
		c.machines.store(withMetadata(m, md, cnsStatusMetadata, want))
	}
	return nil
}

// withMetadata is m with the metadata CloudAPI answered an update with (all
// of the machine's), or, when the answer holds none, m's with key set.
func withMetadata(m *compute.Instance, answer map[string]string, key, value string) *compute.Instance {
	next := *m
	if len(answer) > 0 {
		next.Metadata = maps.Clone(answer)
	} else {
		next.Metadata = maps.Clone(m.Metadata)
		if next.Metadata == nil {
			next.Metadata = map[string]string{}
		}
	}
	next.Metadata[key] = value
	return &next
}

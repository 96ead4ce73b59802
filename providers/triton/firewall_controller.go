package triton

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/framework/providerid"
)

// FirewallControllerName names the firewall controller for --controllers:
// it runs with the default "*", on the leader only, and
// --controllers=*,-triton-firewall turns it off.
const FirewallControllerName = "triton-firewall"

// firewallSyncTimeout bounds one sync, every request and retry in it.
const firewallSyncTimeout = 2 * time.Minute

// firewallController keeps the cluster-wide Cloud Firewall rules
// (firewall_rules.go says which, and how they split with the load
// balancers' rules) and the nodes' machines: each tagged k8s-cluster=<c>,
// so the rules cover it, and, with TRITON_FIREWALL_ENABLE_NODES, its
// firewall on once the rules exist. A sync lists the account's rules once
// and writes only what differs; the nodes' machines are read from the
// list of the cluster's machines the load balancers share
// (lb_machines.go), where this process's writes are at once, so a sync
// with nothing to change makes no write. It syncs at start, every
// TRITON_FIREWALL_RESYNC, and when a Node joins, leaves or gets its
// providerID. A failed sync ends Run with its error: the framework
// restarts the controller with backoff, and its health check fails
// meanwhile.
type firewallController struct {
	api      *api
	cluster  string
	settings FirewallSettings
	// machines is the cluster's machines, as the load balancers share
	// them (nil: only the rules are kept).
	machines *clusterMachines
	codec    providerid.Codec
	nodes    corelisters.NodeLister
	synced   cache.InformerSynced
	// stopWatching removes the Node event handler.
	stopWatching func()
	// trigger asks for a sync; it holds one request, so a burst of Node
	// events costs one sync.
	trigger chan struct{}
	resync  time.Duration
	timeout time.Duration
}

// firewallControllerFor is the framework.Controller of the firewall
// controller.
func (p *Provider) firewallControllerFor() framework.Controller {
	return framework.Controller{
		Name: FirewallControllerName,
		Run: func(ctx context.Context, env *framework.Env) error {
			logger := klog.FromContext(ctx).WithValues("controller", FirewallControllerName)
			ctx = klog.NewContext(ctx, logger)
			if p.api == nil {
				return errors.New("the Triton provider is not initialized")
			}
			if env.ClusterName == "" {
				logger.Error(nil, "Firewall controller off: the cluster has no name (--cluster-name) to tag its machines with")
				return nil
			}
			c, err := p.newFirewallController(env)
			if err != nil {
				return err
			}
			// Start the Node informer just asked for (see
			// framework.Controller).
			env.Informers.Start(ctx.Done())
			return c.run(ctx)
		},
	}
}

// newFirewallController registers the controller's Node event handler.
func (p *Provider) newFirewallController(env *framework.Env) (*firewallController, error) {
	nodes := env.Informers.Core().V1().Nodes()
	c := &firewallController{
		api: p.api, cluster: env.ClusterName, settings: p.cfg.Firewall, codec: framework.Codec(p),
		nodes: nodes.Lister(), synced: nodes.Informer().HasSynced,
		trigger: make(chan struct{}, 1), resync: p.cfg.Firewall.resync(), timeout: firewallSyncTimeout,
		machines: p.machines,
	}
	informer := nodes.Informer()
	reg, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(any) { c.poke() },
		UpdateFunc: func(oldObj, newObj any) {
			o, okOld := oldObj.(*corev1.Node)
			n, okNew := newObj.(*corev1.Node)
			if !okOld || !okNew || o.Spec.ProviderID != n.Spec.ProviderID {
				c.poke()
			}
		},
		DeleteFunc: func(any) { c.poke() },
	})
	if err != nil {
		return nil, fmt.Errorf("watching Nodes: %w", err)
	}
	c.stopWatching = func() { _ = informer.RemoveEventHandler(reg) }
	return c, nil
}

// poke asks for a sync, unless one is asked for already.
func (c *firewallController) poke() {
	select {
	case c.trigger <- struct{}{}:
	default:
	}
}

// run syncs until ctx is done or a sync fails. It starts once the Node
// informer has synced, so the first sync sees every node.
func (c *firewallController) run(ctx context.Context) error {
	defer c.stopWatching()
	logger := klog.FromContext(ctx)
	if !cache.WaitForCacheSync(ctx.Done(), c.synced) {
		return nil // ctx is done
	}
	logger.Info("Starting the firewall controller", "cluster", c.cluster, "resync", c.resync,
		"nodePortsPublic", c.settings.NodePortsPublic, "enableNodes", c.settings.EnableNodes)
	defer logger.Info("Stopped the firewall controller")
	tick := time.NewTicker(c.resync)
	defer tick.Stop()
	for {
		if err := c.sync(ctx); err != nil {
			if ctx.Err() != nil {
				return nil //nolint:nilerr // stopped, not failed
			}
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-c.trigger:
		case <-tick.C:
		}
	}
}

// sync makes the cluster's rules what the settings ask for, then the
// nodes' machines: tagged with the cluster and, when asked, their
// firewalls on (only now that the rules that let the cluster's traffic in
// exist).
func (c *firewallController) sync(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	if err := c.syncRules(ctx); err != nil {
		return err
	}
	return c.syncNodes(ctx)
}

// nodeMachines are the machine UUIDs of the Nodes with a Triton
// providerID (a Node not initialized yet has none: its providerID update
// asks for a sync).
func (c *firewallController) nodeMachines() ([]string, error) {
	return nodeMachineIDs(c.nodes, c.codec)
}

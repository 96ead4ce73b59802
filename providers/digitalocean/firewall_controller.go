package digitalocean

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/digitalocean/godo"
	"k8s.io/apimachinery/pkg/labels"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/framework/cloudapi"
	"github.com/ccmkit/ccmkit/providers/digitalocean/internal/cloud"
)

// FirewallControllerName names the public-access firewall controller for
// --controllers: it runs with the default "*", and
// --controllers=*,-public-access-firewall turns it off. Unless
// PUBLIC_ACCESS_FIREWALL_NAME and PUBLIC_ACCESS_FIREWALL_TAGS are both set
// it does nothing.
const FirewallControllerName = "public-access-firewall"

// Defaults of the controller, as the existing CCM's.
const (
	// firewallResync is how often the cloud's firewall is read again, so
	// a change or deletion made out of band is undone.
	firewallResync = 5 * time.Minute
	// firewallSyncTimeout bounds one reconcile, retries included.
	firewallSyncTimeout = 30 * time.Second
	firewallMinRetry    = time.Second
	// firewallBatch is how long a Service change waits for more before
	// the reconcile, so a burst of changes (a chart installed) costs one
	// update, not one per Service.
	firewallBatch    = time.Second
	firewallMaxRetry = 5 * time.Minute
	// firewallQueueKey is the one item of the queue: every Service change
	// asks for the same reconcile.
	firewallQueueKey = "public-access-firewall"
)

var _ framework.ControllersProvider = (*Provider)(nil)

// Controllers implements framework.ControllersProvider.
func (p *Provider) Controllers() []framework.Controller {
	return []framework.Controller{p.firewallController()}
}

// firewallController is the public-access firewall controller: it keeps
// one firewall, PUBLIC_ACCESS_FIREWALL_NAME, applied to the droplets
// tagged PUBLIC_ACCESS_FIREWALL_TAGS, opening what the cluster's Services
// need (see firewall.go). It reconciles on every Service change and every
// five minutes.
func (p *Provider) firewallController() framework.Controller {
	return framework.Controller{
		Name: FirewallControllerName,
		Run: func(ctx context.Context, env *framework.Env) error {
			ctx = klog.NewContext(ctx, klog.FromContext(ctx).WithValues("controller", FirewallControllerName))
			c, err := p.newFirewallController(ctx, env, firewallOptions{})
			if c == nil || err != nil {
				return err
			}
			// Start the Service informer just asked for: the CCM may have
			// started its informers before it existed (see
			// framework.Controller).
			env.Informers.Start(ctx.Done())
			return c.run(ctx)
		},
	}
}

// firewallOptions tune the controller; zero fields take the defaults.
// Tests shorten them, and drive the batching, retries and resync with a
// fake Clock.
type firewallOptions struct {
	Resync, Timeout, Batch time.Duration
	MinRetry, MaxRetry     time.Duration
	Clock                  clock.WithTicker
}

type publicAccessFirewall struct {
	firewallSpec
	client   *godo.Client
	services corelisters.ServiceLister
	synced   cache.InformerSynced
	// stopWatching removes the Service event handler.
	stopWatching func()
	queue        workqueue.TypedRateLimitingInterface[string]
	resync       time.Duration
	timeout      time.Duration
	clock        clock.WithTicker
	// stale asks the next reconcile to read the cloud's firewall again.
	stale atomic.Bool

	// Owned by the one worker: the firewall as the cloud last showed it
	// (nil: there is none) and whether that is known.
	fw    *godo.Firewall
	known bool
}

// newFirewallController registers the controller's Service event handler.
// It returns nil, and logs why, when the firewall is not configured.
func (p *Provider) newFirewallController(ctx context.Context, env *framework.Env, o firewallOptions) (*publicAccessFirewall, error) {
	logger := klog.FromContext(ctx)
	name, tags := p.cfg.PublicAccessFirewallName, p.cfg.PublicAccessFirewallTags
	switch {
	case name == "" && len(tags) == 0:
		logger.Info("Public-access firewall disabled: PUBLIC_ACCESS_FIREWALL_NAME is not set")
		return nil, nil
	case name == "":
		logger.Error(nil, "Public-access firewall disabled: PUBLIC_ACCESS_FIREWALL_TAGS is set but PUBLIC_ACCESS_FIREWALL_NAME is not")
		return nil, nil
	case len(tags) == 0:
		logger.Error(nil, "Public-access firewall disabled: PUBLIC_ACCESS_FIREWALL_NAME is set but PUBLIC_ACCESS_FIREWALL_TAGS is not", "firewall", name)
		return nil, nil
	case p.client == nil:
		return nil, errors.New("the DigitalOcean provider is not initialized")
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&o.Resync, firewallResync)
	def(&o.Timeout, firewallSyncTimeout)
	def(&o.Batch, firewallBatch)
	def(&o.MinRetry, firewallMinRetry)
	def(&o.MaxRetry, firewallMaxRetry)
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	services := env.Informers.Core().V1().Services()
	c := &publicAccessFirewall{
		firewallSpec: firewallSpec{name: name, tags: tags, defaultLBType: p.cfg.DefaultLBType},
		client:       p.client,
		services:     services.Lister(),
		synced:       services.Informer().HasSynced,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.NewTypedItemExponentialFailureRateLimiter[string](o.MinRetry, o.MaxRetry),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: FirewallControllerName, Clock: o.Clock}),
		resync:  o.Resync,
		timeout: o.Timeout,
		clock:   o.Clock,
	}
	// While the key waits, more changes do not delay it further.
	enqueue := func(any) { c.queue.AddAfter(firewallQueueKey, o.Batch) }
	informer := services.Informer()
	reg, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(_, obj any) { enqueue(obj) },
		DeleteFunc: enqueue,
	})
	if err != nil {
		return nil, fmt.Errorf("watching Services: %w", err)
	}
	c.stopWatching = func() { _ = informer.RemoveEventHandler(reg) }
	return c, nil
}

// run reconciles until ctx is done. It starts only once the Service
// informer has synced: before that the Services look absent and every
// rule would be removed.
func (c *publicAccessFirewall) run(ctx context.Context) error {
	defer c.queue.ShutDown()
	defer c.stopWatching()
	logger := klog.FromContext(ctx)
	logger.Info("Starting the public-access firewall controller", "firewall", c.name, "tags", c.tags, "resync", c.resync)
	defer logger.Info("Stopped the public-access firewall controller")
	if !cache.WaitForCacheSync(ctx.Done(), c.synced) {
		return fmt.Errorf("%s: waiting for the Service informer: %w", FirewallControllerName, ctx.Err())
	}
	c.queue.Add(firewallQueueKey) // even with no Service event
	var worker sync.WaitGroup
	worker.Go(func() {
		for c.next(ctx) {
		}
	})
	tick := c.clock.NewTicker(c.resync)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			c.queue.ShutDown() // ends the worker's c.queue.Get
			worker.Wait()
			return nil
		case <-tick.C():
			c.stale.Store(true)
			c.queue.Add(firewallQueueKey)
		}
	}
}

// next runs one queued reconcile, requeueing it with backoff on failure.
// It returns false once the queue is shut down.
func (c *publicAccessFirewall) next(ctx context.Context) bool {
	key, quit := c.queue.Get()
	if quit {
		return false
	}
	defer c.queue.Done(key)
	sctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	if err := c.reconcile(sctx); err != nil {
		if ctx.Err() == nil {
			klog.FromContext(ctx).Error(err, "Reconciling the public-access firewall failed; will retry", "firewall", c.name, "retries", c.queue.NumRequeues(key))
			c.queue.AddRateLimited(key)
		}
		return true
	}
	c.queue.Forget(key)
	return true
}

// reconcile makes the cloud's firewall what the Services need. With
// nothing changed it makes no API call at all: the firewall is compared
// with the copy the last call returned, which the periodic resync
// refreshes.
func (c *publicAccessFirewall) reconcile(ctx context.Context) error {
	logger := klog.FromContext(ctx)
	svcs, err := c.services.List(labels.Everything())
	if err != nil {
		return fmt.Errorf("listing Services: %w", err)
	}
	want := c.desiredFirewall(logger, svcs)
	if c.stale.Swap(false) {
		c.known = false
	}
	if !c.known {
		if err := c.read(ctx); err != nil {
			return err
		}
	}
	if c.fw == nil {
		return c.create(ctx, want)
	}
	added, removed := firewallDiff(c.fw, want)
	if len(added) == 0 && len(removed) == 0 {
		logger.V(4).Info("Public-access firewall up to date", "firewall", c.name, "id", c.fw.ID)
		return nil
	}
	id := c.fw.ID
	fw, _, err := c.client.Firewalls.Update(cloudapi.WithOperation(ctx, "firewalls.update"), id, want)
	switch {
	case cloud.IsNotFound(err):
		logger.Info("The public-access firewall was deleted; creating it again", "firewall", c.name, "id", id)
		c.fw = nil
		return c.create(ctx, want)
	case err != nil:
		c.known = false // the update may have happened
		return fmt.Errorf("updating firewall %s (%s): %w", c.name, id, err)
	}
	c.fw, c.known = fw, fw != nil
	logger.Info("Updated the public-access firewall", "firewall", c.name, "id", id, "added", added, "removed", removed)
	return nil
}

// read finds the cloud's firewall: by the ID it had, else by name.
func (c *publicAccessFirewall) read(ctx context.Context) error {
	if c.fw != nil {
		fw, _, err := c.client.Firewalls.Get(cloudapi.WithOperation(ctx, "firewalls.get"), c.fw.ID)
		if err == nil {
			c.fw, c.known = fw, true
			return nil
		}
		if !cloud.IsNotFound(err) {
			return fmt.Errorf("reading firewall %s (%s): %w", c.name, c.fw.ID, err)
		}
		klog.FromContext(ctx).Info("The public-access firewall is gone; looking it up by name", "firewall", c.name, "id", c.fw.ID)
	}
	fw, err := findFirewall(ctx, c.client, c.name)
	if err != nil {
		return err
	}
	c.fw, c.known = fw, true
	return nil
}

func (c *publicAccessFirewall) create(ctx context.Context, want *godo.FirewallRequest) error {
	fw, _, err := c.client.Firewalls.Create(cloudapi.WithOperation(ctx, "firewalls.create"), want)
	if err != nil {
		c.known = false // it may exist now: look it up before creating again
		return fmt.Errorf("creating firewall %s: %w", c.name, err)
	}
	if fw == nil {
		c.known = false
		return fmt.Errorf("creating firewall %s: the API answered no firewall", c.name)
	}
	c.fw, c.known = fw, true
	klog.FromContext(ctx).Info("Created the public-access firewall", "firewall", c.name, "id", fw.ID, "tags", c.tags, "inboundRules", len(want.InboundRules))
	return nil
}

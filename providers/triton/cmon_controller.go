package triton

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/framework/providerid"
	"github.com/ccmkit/ccmkit/providers/triton/internal/cloud"
)

// CMONControllerName names the metrics controller for --controllers.
const CMONControllerName = "triton-cmon"

// cmonSyncKey is the one key of the controller's queue: a sync covers
// every node, the Secret and the ConfigMap, so a burst of Node events is
// one sync.
const cmonSyncKey = "cmon"

// cmonController sets the cluster up for CMON, Triton's Prometheus
// endpoint for every machine: it keeps the cluster's CMON group in the
// node machines' triton.cmon.groups tag (cmon_groups.go), a client
// certificate signed by the account key in a Secret (cmon_secret.go,
// cmon_cert.go) and a Prometheus scrape job in a ConfigMap
// (cmon_prometheus.go). It syncs when a Node joins or gets its
// providerID, every Resync, and when the certificate is due for renewal;
// a sync with nothing to change makes no write.
type cmonController struct {
	api      *api
	signer   *cloud.Signer
	kube     kubernetes.Interface
	settings CMONSettings
	cluster  string
	// login is the account's login, the certificate's subject; group the
	// cluster's CMON group.
	login, group string
	codec        providerid.Codec
	nodes        corelisters.NodeLister
	synced       cache.InformerSynced
	queue        workqueue.TypedRateLimitingInterface[string]
	now          func() time.Time
	// endpoint is CMON's, once known.
	endpoint *cmonEndpoint
}

// cmonControllerFor is the framework.Controller of the metrics controller.
func (p *Provider) cmonControllerFor() framework.Controller {
	return framework.Controller{
		Name: CMONControllerName,
		Run: func(ctx context.Context, env *framework.Env) error {
			if p.api == nil {
				return nil
			}
			ctx = klog.NewContext(ctx, klog.FromContext(ctx).WithValues("controller", CMONControllerName))
			c, err := newCMONController(env, p)
			if err != nil {
				return err
			}
			env.Informers.Start(ctx.Done())
			return c.run(ctx)
		},
	}
}

// newCMONController checks what the controller needs and registers its
// Node event handler.
func newCMONController(env *framework.Env, p *Provider) (*cmonController, error) {
	if env.Client == nil {
		return nil, errors.New("the metrics controller needs the CCM's Kubernetes client")
	}
	if err := p.cfg.CMON.validate(); err != nil {
		return nil, err
	}
	s, ok := p.api.Signer()
	if !ok {
		return nil, errors.New("the metrics controller needs the account key, and the CloudAPI client has none")
	}
	settings := p.cfg.CMON.withDefaults()
	nodes := env.Informers.Core().V1().Nodes()
	c := &cmonController{
		api: p.api, signer: s, kube: env.Client, settings: settings, cluster: env.ClusterName,
		login: p.api.Login, group: settings.cmonGroup(env.ClusterName), codec: framework.Codec(p),
		nodes: nodes.Lister(), synced: nodes.Informer().HasSynced,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: CMONControllerName}),
		now: time.Now,
	}
	if settings.URL != "" {
		e, err := parseCMONURL(settings.URL)
		if err != nil {
			return nil, fmt.Errorf("TRITON_CMON_URL: %w", err)
		}
		c.endpoint = &e
	}
	_, err := nodes.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(any) { c.queue.Add(cmonSyncKey) },
		UpdateFunc: func(oldObj, newObj any) {
			o, okOld := oldObj.(*corev1.Node)
			n, okNew := newObj.(*corev1.Node)
			if !okOld || !okNew || o.Spec.ProviderID != n.Spec.ProviderID {
				c.queue.Add(cmonSyncKey)
			}
		},
	})
	if err != nil {
		return nil, fmt.Errorf("watching Nodes: %w", err)
	}
	return c, nil
}

// run syncs until ctx is done.
func (c *cmonController) run(ctx context.Context) error {
	defer c.queue.ShutDown()
	if !cache.WaitForCacheSync(ctx.Done(), c.synced) {
		return ctx.Err()
	}
	klog.FromContext(ctx).Info("Starting the CMON controller", "group", c.group,
		"secret", klog.KRef(c.settings.Namespace, c.settings.Secret), "configMap", klog.KRef(c.settings.Namespace, c.settings.ConfigMap))
	c.queue.Add(cmonSyncKey)
	go wait.UntilWithContext(ctx, c.work, time.Second)
	<-ctx.Done()
	return nil
}

func (c *cmonController) work(ctx context.Context) {
	for {
		key, quit := c.queue.Get()
		if quit {
			return
		}
		next, err := c.sync(ctx)
		if err != nil {
			klog.FromContext(ctx).Error(err, "Syncing the cluster for CMON")
			c.queue.AddRateLimited(key)
		} else {
			c.queue.Forget(key)
		}
		c.queue.AddAfter(key, next)
		c.queue.Done(key)
	}
}

// sync does the three jobs, each whatever the others' errors, and returns
// when to sync again: after Resync, or sooner when the certificate is due
// for renewal by then.
func (c *cmonController) sync(ctx context.Context) (time.Duration, error) {
	next := c.settings.Resync
	var errs []error
	if err := c.ensureGroups(ctx); err != nil {
		errs = append(errs, fmt.Errorf("the node machines' %s tags: %w", cmonGroupsTag, err))
	}
	notAfter, err := c.ensureCert(ctx)
	if err != nil {
		errs = append(errs, fmt.Errorf("the CMON client certificate: %w", err))
	} else if due := notAfter.Add(-c.settings.RenewBefore).Sub(c.now()); due < next {
		next = max(due, time.Second)
	}
	if err := c.ensureConfigMap(ctx); err != nil {
		errs = append(errs, fmt.Errorf("the Prometheus configuration: %w", err))
	}
	return next, errors.Join(errs...)
}

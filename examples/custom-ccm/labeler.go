package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
)

// label is a Kubernetes label, "key=value"; it implements pflag.Value, so a
// bad --node-label stops the binary at start-up, not later.
type label struct{ key, value string }

func (l *label) String() string { return l.key + "=" + l.value }

func (l *label) Type() string { return "key=value" }

func (l *label) Set(s string) error {
	key, value, ok := strings.Cut(s, "=")
	if !ok {
		return fmt.Errorf("%q is not key=value", s)
	}
	if errs := validation.IsQualifiedName(key); len(errs) > 0 {
		return fmt.Errorf("label key %q: %s", key, strings.Join(errs, "; "))
	}
	if errs := validation.IsValidLabelValue(value); len(errs) > 0 {
		return fmt.Errorf("label value %q: %s", value, strings.Join(errs, "; "))
	}
	l.key, l.value = key, value
	return nil
}

// labeler keeps a label on every Node. Node events and a periodic resync
// of the informer feed a workqueue; one worker patches the Nodes that lack
// the label, so a Node that already has it costs no API call.
type labeler struct {
	client kubernetes.Interface
	nodes  corelisters.NodeLister
	synced cache.InformerSynced
	queue  workqueue.TypedRateLimitingInterface[string]
	label  label
}

// newLabeler registers its Node event handler with the CCM's shared
// informers; resync is how often every Node is checked again.
func newLabeler(client kubernetes.Interface, factory informers.SharedInformerFactory, l label, resync time.Duration) (*labeler, error) {
	nodes := factory.Core().V1().Nodes()
	c := &labeler{
		client: client,
		nodes:  nodes.Lister(),
		synced: nodes.Informer().HasSynced,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "node-labeler"}),
		label: l,
	}
	_, err := nodes.Informer().AddEventHandlerWithResyncPeriod(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueue,
		UpdateFunc: func(_, obj any) { c.enqueue(obj) },
	}, resync)
	if err != nil {
		return nil, fmt.Errorf("watching Nodes: %w", err)
	}
	return c, nil
}

func (c *labeler) enqueue(obj any) {
	if node, ok := obj.(*corev1.Node); ok && node.Labels[c.label.key] != c.label.value {
		c.queue.Add(node.Name)
	}
}

// run labels Nodes until ctx is done, and returns once its worker has
// stopped.
func (c *labeler) run(ctx context.Context) error {
	defer c.queue.ShutDown()
	logger := klog.FromContext(ctx)
	logger.Info("Starting node labeler", "label", c.label.String())
	defer logger.Info("Stopped node labeler")
	if !cache.WaitForCacheSync(ctx.Done(), c.synced) {
		return fmt.Errorf("waiting for the Node informer: %w", ctx.Err())
	}
	var worker sync.WaitGroup
	worker.Go(func() { wait.UntilWithContext(ctx, c.work, time.Second) })
	<-ctx.Done()
	c.queue.ShutDown() // ends the worker's c.queue.Get
	worker.Wait()
	return nil
}

func (c *labeler) work(ctx context.Context) {
	for c.next(ctx) {
	}
}

// next handles one queued Node, requeueing it with backoff on failure. It
// returns false once the queue is shut down.
func (c *labeler) next(ctx context.Context) bool {
	name, quit := c.queue.Get()
	if quit {
		return false
	}
	defer c.queue.Done(name)
	if err := c.sync(ctx, name); err != nil {
		klog.FromContext(ctx).Error(err, "Labeling node failed; will retry", "node", name)
		c.queue.AddRateLimited(name)
		return true
	}
	c.queue.Forget(name)
	return true
}

// sync adds the label to the Node called name if it lacks it.
func (c *labeler) sync(ctx context.Context, name string) error {
	node, err := c.nodes.Get(name)
	if apierrors.IsNotFound(err) {
		return nil // deleted since it was queued
	}
	if err != nil {
		return err
	}
	if node.Labels[c.label.key] == c.label.value {
		return nil
	}
	// A merge patch of one label: never overwrites concurrent changes.
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]string{c.label.key: c.label.value}}})
	if err != nil {
		return err
	}
	if _, err := c.client.CoreV1().Nodes().Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("patching node %s: %w", name, err)
	}
	klog.FromContext(ctx).V(2).Info("Labeled node", "node", name, "label", c.label.String())
	return nil
}

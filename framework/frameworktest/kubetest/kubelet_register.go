package kubetest

import (
	"context"
	"errors"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/workqueue"
)

// registerWorkers bounds the registrations in flight in RegisterNodes.
const registerWorkers = 16

// RegisterNodes starts one Kubelet per spec, registering up to 16 nodes at
// a time, and returns them in spec order. On error it stops the ones it
// started (their Nodes stay) and returns every registration error. With
// heartbeat 0 a node costs two API calls (create, and the not-ready taint's
// removal) and no goroutine.
func RegisterNodes(ctx context.Context, client kubernetes.Interface, specs []NodeSpec, heartbeat time.Duration) ([]*Kubelet, error) {
	kubelets := make([]*Kubelet, len(specs))
	errs := make([]error, len(specs))
	workqueue.ParallelizeUntil(ctx, registerWorkers, len(specs), func(i int) {
		kubelets[i], errs[i] = StartKubelet(ctx, client, specs[i], heartbeat)
	})
	err := errors.Join(errs...)
	if err == nil && ctx.Err() != nil {
		err = context.Cause(ctx)
	}
	if err != nil {
		StopAll(kubelets)
		return nil, err
	}
	return kubelets, nil
}

// StopAll stops every Kubelet's heartbeats; nil entries are skipped.
func StopAll(kubelets []*Kubelet) {
	for _, k := range kubelets {
		if k != nil {
			k.Stop()
		}
	}
}

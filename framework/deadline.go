package framework

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Deadlines of whole cloud operations, on top of the cloudapi transport's
// per-request bound (cloudapi.Options.Budget): an operation may make
// several requests.
const (
	// DefaultInitTimeout bounds Provider.Init at start-up
	// (--cloud-init-timeout): a cloud API that does not answer ends the
	// process with an error after this long, whatever the provider.
	DefaultInitTimeout = time.Minute
	// DefaultInstanceLookupTimeout bounds each InstancesV2 call
	// (--instance-lookup-timeout). The node lifecycle controller checks
	// nodes one after another, so a hung cloud API delays its whole loop
	// by at most this much per node checked.
	DefaultInstanceLookupTimeout = time.Minute
)

// operationDeadline bounds an operation by timeout: 0 means fallback,
// negative means no bound. flag names the setting in errors.
type operationDeadline struct {
	timeout, fallback time.Duration
	flag              string
}

func (d operationDeadline) duration() time.Duration {
	if d.timeout == 0 {
		return d.fallback
	}
	return d.timeout
}

// start returns ctx bounded by the deadline.
func (d operationDeadline) start(ctx context.Context) (context.Context, context.CancelFunc) {
	if d.duration() < 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeoutCause(ctx, d.duration(), d.exceeded())
}

// exceeded is the error of an operation that ran out of time.
func (d operationDeadline) exceeded() error {
	return fmt.Errorf("%w: the cloud did not answer within %s=%s", context.DeadlineExceeded, d.flag, d.duration())
}

// initWithDeadline runs p.Init bounded by env.InitTimeout.
func initWithDeadline(ctx context.Context, p Provider, env *Env) error {
	d := operationDeadline{timeout: env.InitTimeout, fallback: DefaultInitTimeout, flag: "--cloud-init-timeout"}
	initCtx, cancel := d.start(ctx)
	defer cancel()
	err := p.Init(initCtx, env)
	if err != nil && ctx.Err() == nil && errors.Is(context.Cause(initCtx), context.DeadlineExceeded) {
		return fmt.Errorf("%w (%w)", err, context.Cause(initCtx))
	}
	return err
}

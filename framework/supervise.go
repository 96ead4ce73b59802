package framework

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/controller-manager/controller"
	"k8s.io/controller-manager/pkg/healthz"
	"k8s.io/klog/v2"
)

// Restarts of an extra controller whose Run failed: exponential from one
// second, capped at a minute. A run that lasted restartResetAfter (twice the
// cap, as client-go's flowcontrol.Backoff expires an entry) counts as
// healthy, and the next failure starts again from the first step.
var restartBackoff = wait.Backoff{Duration: time.Second, Factor: 2, Jitter: 0.1, Steps: 1 << 30, Cap: time.Minute}

const restartResetAfter = 2 * time.Minute

// supervisor runs an extra controller and restarts it when its Run fails.
// It is the controller.Interface the upstream builder gets, so its health
// check is the controller's /healthz check: failing from the moment Run
// fails until it is running again.
type supervisor struct {
	ctrl Controller

	mu       sync.Mutex
	failures int   // failures in a row, since the last healthy run
	lastErr  error // nil while Run is running, or after it returned nil
	restart  time.Time
}

var (
	_ controller.Interface       = (*supervisor)(nil)
	_ controller.HealthCheckable = (*supervisor)(nil)
)

// Name implements controller.Interface.
func (s *supervisor) Name() string { return s.ctrl.Name }

// HealthChecker implements controller.HealthCheckable.
func (s *supervisor) HealthChecker() healthz.UnnamedHealthChecker { return s }

// Check fails while the controller is down after a failed Run.
func (s *supervisor) Check(*http.Request) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lastErr == nil {
		return nil
	}
	return fmt.Errorf("controller %s is not running (failed %d times in a row, restarting at %s): %w",
		s.ctrl.Name, s.failures, s.restart.Format(time.RFC3339), s.lastErr)
}

// run calls Run until ctx is done, waiting with backoff after each failure.
// A Run that returns nil before ctx is done has finished on purpose (a
// controller its configuration leaves idle, say) and is not restarted.
func (s *supervisor) run(ctx context.Context, env *Env) {
	logger := klog.FromContext(ctx).WithValues("controller", s.ctrl.Name)
	backoff := restartBackoff
	for {
		started := time.Now()
		err := s.ctrl.Run(ctx, env)
		if ctx.Err() != nil {
			return
		}
		if err == nil {
			logger.Info("Controller finished")
			return
		}
		healthy := time.Since(started) >= restartResetAfter
		if healthy {
			backoff = restartBackoff
		}
		wait := backoff.Step()
		failures := s.setFailed(err, healthy, time.Now().Add(wait))
		logger.Error(err, "Controller failed; restarting it", "failures", failures, "in", wait.Round(time.Millisecond))
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case <-timer.C:
		}
		s.setRunning()
	}
}

// setFailed records a failure after a run that was healthy (long enough to
// reset the count) or not, and returns the failures in a row.
func (s *supervisor) setFailed(err error, healthy bool, restart time.Time) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if healthy {
		s.failures = 0
	}
	s.failures++
	s.lastErr, s.restart = err, restart
	return s.failures
}

func (s *supervisor) setRunning() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lastErr = nil
}

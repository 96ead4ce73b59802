package framework

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"k8s.io/cloud-provider/app"
	genericcontrollermanager "k8s.io/controller-manager/app"
	"k8s.io/controller-manager/controller"
	controllerhealthz "k8s.io/controller-manager/pkg/healthz"
)

type namedProvider string

func (p namedProvider) Name() string                   { return string(p) }
func (namedProvider) Init(context.Context, *Env) error { return nil }

// startSupervised starts ctrl as the upstream builder does (through the
// constructor registry.go gives it) and returns the /healthz handler the
// builder would serve, with the check it mounts for the controller, and
// that check.
func startSupervised(t *testing.T, ctx context.Context, ctrl Controller) (http.Handler, controllerhealthz.UnnamedHealthChecker) {
	t.Helper()
	cloud := &Cloud{provider: namedProvider("fake"), env: &Env{}}
	init := registeredController{ctrl: ctrl}.constructor().Constructor(app.ControllerInitContext{}, nil, cloud)
	c, started, err := init(ctx, genericcontrollermanager.ControllerContext{})
	if err != nil || !started {
		t.Fatalf("init = %v, %v, %v; want a started controller", c, started, err)
	}
	hc, ok := c.(controller.HealthCheckable)
	if !ok || hc.HealthChecker() == nil {
		t.Fatalf("%T gives the builder no health check", c)
	}
	return controllerhealthz.NewMutableHealthzHandler(controllerhealthz.NamedHealthChecker(ctrl.Name, hc.HealthChecker())), hc.HealthChecker()
}

// getHealthz returns /healthz's status code and body.
func getHealthz(h http.Handler) (int, string) {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/healthz?verbose", nil))
	return rec.Code, rec.Body.String()
}

func TestSupervisorRestartsAFailedController(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var runs atomic.Int32
		h, check := startSupervised(t, t.Context(), Controller{Name: "flaky", Run: func(ctx context.Context, _ *Env) error {
			if runs.Add(1) == 1 {
				return errors.New("lost the watch")
			}
			<-ctx.Done()
			return nil
		}})

		synctest.Wait() // the first Run failed; the supervisor waits to restart it
		if n := runs.Load(); n != 1 {
			t.Fatalf("Run called %d times before the backoff passed, want 1", n)
		}
		code, body := getHealthz(h)
		if code != http.StatusInternalServerError || !strings.Contains(body, "[-]flaky failed") {
			t.Fatalf("/healthz while the controller is down = %d\n%s\nwant 500 naming the controller", code, body)
		}
		// /healthz withholds the reason (it logs it); the check gives it.
		if err := check.Check(nil); err == nil || !strings.Contains(err.Error(), "lost the watch") {
			t.Fatalf("health check while the controller is down = %v, want the controller's error", err)
		}

		time.Sleep(restartBackoff.Duration * 2) // fake time: past the first backoff step with any jitter
		synctest.Wait()
		if n := runs.Load(); n != 2 {
			t.Fatalf("Run called %d times after the backoff, want 2 (restarted once)", n)
		}
		if code, body := getHealthz(h); code != http.StatusOK || !strings.Contains(body, "[+]flaky ok") {
			t.Fatalf("/healthz with the controller running again = %d\n%s", code, body)
		}
	})
}

// Failures in a row back off exponentially up to the cap; after a run that
// lasted restartResetAfter, the next failure is restarted after the first
// step again.
func TestSupervisorBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var starts []time.Time
		longRun := 8 // the 8th run is healthy for a while, then fails
		_, _ = startSupervised(t, t.Context(), Controller{Name: "failing", Run: func(ctx context.Context, _ *Env) error {
			starts = append(starts, time.Now())
			if len(starts) == longRun {
				time.Sleep(restartResetAfter)
			}
			return errors.New("broken")
		}})
		time.Sleep(10 * time.Minute)
		synctest.Wait()

		gap := func(i int) time.Duration { return starts[i].Sub(starts[i-1]) }
		within := func(d, want time.Duration) bool { return d >= want && d <= want+want/10 }
		for i, want := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, 32 * time.Second, time.Minute} {
			if !within(gap(i+1), want) {
				t.Errorf("restart %d came %s after the previous start, want %s (+10%% jitter)", i+1, gap(i+1), want)
			}
		}
		if d := gap(longRun) - restartResetAfter; !within(d, time.Second) {
			t.Errorf("after a healthy run the restart came %s after the failure, want the first step (1s)", d)
		}
	})
}

// A Run that returns nil has finished on purpose: not restarted, healthy.
func TestSupervisorLeavesAFinishedControllerAlone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var runs atomic.Int32
		h, _ := startSupervised(t, t.Context(), Controller{Name: "idle", Run: func(context.Context, *Env) error {
			runs.Add(1)
			return nil
		}})
		time.Sleep(time.Hour)
		synctest.Wait()
		if n := runs.Load(); n != 1 {
			t.Errorf("Run called %d times, want 1", n)
		}
		if code, body := getHealthz(h); code != http.StatusOK {
			t.Errorf("/healthz = %d\n%s", code, body)
		}
	})
}

package digitalocean

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/digitalocean/godo"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2/ktesting"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/framework/cloudapi"
	"github.com/ccmkit/ccmkit/framework/frameworktest"
	"github.com/ccmkit/ccmkit/providers/digitalocean/dosim"
)

// fwHarness runs the firewall controller against dosim and a fake
// clientset. The controller's batching, retries and resync run on clock, a
// fake clock the tests step.
type fwHarness struct {
	t     *testing.T
	sim   *dosim.Server
	kube  kubernetes.Interface
	api   *godo.Client // an out-of-band API user
	ctx   context.Context
	clock *testingclock.FakeClock
	epoch time.Time             // the fake clock's start
	ctrl  *publicAccessFirewall // the controller start runs
}

func newFWHarness(t *testing.T) *fwHarness {
	sim := dosim.NewServer(t, dosim.Options{})
	sim.AddDroplet(dosim.Droplet{Name: "worker-1", Tags: []string{testWorkerTag}})
	_, ctx := ktesting.NewTestContext(t)
	epoch := time.Now()
	return &fwHarness{t: t, sim: sim, api: withToken(t, sim), kube: frameworktest.NewClientset(), ctx: ctx,
		clock: testingclock.NewFakeClock(epoch), epoch: epoch}
}

// withToken is a godo client with the simulator's token.
func withToken(t *testing.T, sim *dosim.Server) *godo.Client {
	c, err := godo.New(cloudapi.WithBearerToken(http.DefaultClient, strings.TrimPrefix(sim.URL(), "http://"), func() (string, error) { return sim.Token(), nil }),
		godo.SetBaseURL(sim.URL()+"/"))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// provider is an initialized DigitalOcean provider on the simulator.
func (h *fwHarness) provider(vars map[string]string) *Provider {
	h.t.Helper()
	env := h.sim.Env(h.sim.URL())
	for k, v := range vars {
		env[k] = v
	}
	p := New()
	_, err := framework.NewCloud(h.ctx, p, &framework.Env{
		ClusterName: "test-cluster",
		LookupEnv:   func(k string) (string, bool) { v, ok := env[k]; return v, ok },
		CloudAPI:    cloudapi.Options{MaxRetries: -1, Timeout: time.Second},
	})
	if err != nil {
		h.t.Fatalf("NewCloud: %v", err)
	}
	return p
}

func (h *fwHarness) env() *framework.Env {
	return &framework.Env{Client: h.kube, Informers: informers.NewSharedInformerFactory(h.kube, 0)}
}

var enabled = map[string]string{
	"PUBLIC_ACCESS_FIREWALL_NAME": testFirewallName,
	"PUBLIC_ACCESS_FIREWALL_TAGS": testWorkerTag,
}

// start runs the controller with o, on the harness's fake clock, until
// the test ends.
func (h *fwHarness) start(o firewallOptions) {
	h.t.Helper()
	o.Clock = h.clock
	p := h.provider(enabled)
	env := h.env()
	ctx, cancel := context.WithCancel(h.ctx)
	c, err := p.newFirewallController(ctx, env, o)
	if err != nil || c == nil {
		h.t.Fatalf("newFirewallController = %v, %v", c, err)
	}
	h.ctrl = c
	env.Informers.Start(ctx.Done())
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := c.run(ctx); err != nil {
			h.t.Errorf("run: %v", err)
		}
	})
	h.t.Cleanup(func() {
		cancel()
		wg.Wait()
		env.Informers.Shutdown()
	})
}

func (h *fwHarness) createService(svc *corev1.Service) {
	h.t.Helper()
	if _, err := h.kube.CoreV1().Services(svc.Namespace).Create(h.ctx, svc, metav1.CreateOptions{}); err != nil {
		h.t.Fatal(err)
	}
}

func (h *fwHarness) updateService(svc *corev1.Service) {
	h.t.Helper()
	if _, err := h.kube.CoreV1().Services(svc.Namespace).Update(h.ctx, svc, metav1.UpdateOptions{}); err != nil {
		h.t.Fatal(err)
	}
}

// stepUntil waits until cond holds, moving the fake clock on by step
// before each look while it does not: a timer the controller sets (the
// batch delay, a retry's backoff, the resync) fires within a step of
// being due, however late the controller set it. step 0 only waits.
func (h *fwHarness) stepUntil(what string, step time.Duration, cond func() bool) {
	h.t.Helper()
	err := wait.PollUntilContextTimeout(h.ctx, 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		if cond() {
			return true, nil
		}
		h.clock.Step(step)
		return false, nil
	})
	if err != nil {
		h.t.Fatalf("waiting for %s (the fake clock at +%s)", what, h.clock.Since(h.epoch))
	}
}

// waitForRules waits, moving the clock by step, until the cloud's
// firewalls called testFirewallName hold exactly these inbound rules (one
// firewall), and returns it.
func (h *fwHarness) waitForRules(what string, step time.Duration, want ...string) dosim.Firewall {
	h.t.Helper()
	if want == nil {
		want = []string{}
	}
	var last []dosim.Firewall
	h.stepUntil(fmt.Sprintf("%s: firewalls named %s hold %v", what, testFirewallName, want), step, func() bool {
		last = named(h.sim.Firewalls(), testFirewallName)
		return len(last) == 1 && cmp.Equal(simRules(last[0]), want)
	})
	return last[0]
}

// waitForServices waits until the controller's informer holds n Services.
func (h *fwHarness) waitForServices(n int) {
	h.t.Helper()
	h.stepUntil(fmt.Sprintf("the controller to see %d Services", n), 0, func() bool {
		svcs, err := h.ctrl.services.List(labels.Everything())
		return err == nil && len(svcs) == n
	})
}

func named(fws []dosim.Firewall, name string) []dosim.Firewall {
	var out []dosim.Firewall
	for _, fw := range fws {
		if fw.Name == name {
			out = append(out, fw)
		}
	}
	return out
}

func simRules(fw dosim.Firewall) []string {
	out := []string{}
	for _, r := range fw.InboundRules {
		out = append(out, fmt.Sprintf("%s:%s %s", r.Protocol, r.PortRange, strings.Join(r.Sources.Addresses, ",")))
	}
	return out
}

// firewallCalls counts the firewall API requests.
func firewallCalls(sim *dosim.Server) map[string]int {
	out := map[string]int{}
	for op, n := range sim.Stats() {
		if strings.Contains(op, "/v2/firewalls") {
			out[op] = n
		}
	}
	return out
}

func noDeletes(t *testing.T, sim *dosim.Server) {
	t.Helper()
	if n := sim.Stats()["DELETE /v2/firewalls/{id}"]; n != 0 {
		t.Errorf("the controller deleted %d firewalls", n)
	}
}

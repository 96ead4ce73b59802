package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/ccmkit/ccmkit/framework/frameworktest/kubetest"
	"github.com/ccmkit/ccmkit/internal/cluster"
)

// TestMain stops the shared control planes when the suite ends.
func TestMain(m *testing.M) {
	code := m.Run()
	planes.stopAll()
	os.Exit(code)
}

// planes are the control planes the scenarios of each provider share: one
// per provider, started on first use, stopped by TestMain. The scenarios of
// one provider take turns on it (cluster.Plane.Attach), and each leaves it
// as it found it.
var planes = sharedPlanes{byName: map[string]*sharedPlane{}}

type sharedPlanes struct {
	mu     sync.Mutex
	byName map[string]*sharedPlane
}

type sharedPlane struct {
	once  sync.Once
	plane *cluster.Plane
	err   error
}

// get returns p's plane, starting it on first use.
func (s *sharedPlanes) get(t *testing.T, p cluster.Provider) *cluster.Plane {
	t.Helper()
	bin := requireBinaries(t)
	s.mu.Lock()
	sp, ok := s.byName[p.Name]
	if !ok {
		sp = &sharedPlane{}
		s.byName[p.Name] = sp
	}
	s.mu.Unlock()
	sp.once.Do(func() {
		// Not the test's context: the plane outlives the test that starts it.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		sp.plane, sp.err = cluster.StartPlane(ctx, cluster.PlaneOptions{Provider: p, Root: filepath.Dir(bin), BinDir: bin})
	})
	if sp.err != nil {
		t.Fatalf("starting the %s control plane: %v", p.Name, sp.err)
	}
	return sp.plane
}

func (s *sharedPlanes) stopAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sp := range s.byName {
		if sp.plane != nil {
			sp.plane.Stop()
		}
	}
}

// startCluster attaches a scenario to p's shared control plane, with a
// simulated cloud of its own and a namespace of its own
// (cluster.Namespace). When the test ends its CCMs, kubelets and cloud
// are stopped (their logs dumped on failure) and the plane is reset for
// the next scenario.
func startCluster(t *testing.T, p cluster.Provider, sim cluster.SimOptions) *cluster.Cluster {
	t.Helper()
	return attach(t, planes.get(t, p), cluster.AttachOptions{WorkDir: t.TempDir(), Sim: sim})
}

// attach is startCluster with the plane and options given.
func attach(t *testing.T, plane *cluster.Plane, o cluster.AttachOptions) *cluster.Cluster {
	t.Helper()
	c, err := plane.Attach(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			dumpLogs(t, c.WorkDir)
		}
		c.Stop()
	})
	return c
}

// requireBinaries returns the directory holding kube-apiserver and etcd. It
// skips the test when they are not built, unless CCMKIT_E2E=required (set
// by `make test`) makes that a failure.
func requireBinaries(t testing.TB) string {
	t.Helper()
	bin, err := kubetest.ControlPlaneBinDir("")
	if err != nil {
		if os.Getenv("CCMKIT_E2E") == "required" {
			t.Fatalf("%v: run `make controlplane`", err)
		}
		t.Skipf("%v: run `make controlplane` (or `make test`) to run the end-to-end suite", err)
	}
	return bin
}

func dumpLogs(t testing.TB, dir string) {
	logs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	for _, l := range logs {
		b, err := os.ReadFile(l)
		if err != nil {
			continue
		}
		lines := strings.Split(string(b), "\n")
		if len(lines) > 200 {
			lines = lines[len(lines)-200:]
		}
		t.Logf("---- %s (last %d lines) ----\n%s", filepath.Base(l), len(lines), strings.Join(lines, "\n"))
	}
}

// eventually polls cond every 200ms until it holds or timeout passes. A
// wait of over slowWait is logged (go test -v), to show where a test's
// time goes.
func eventually(t testing.TB, timeout time.Duration, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	start := time.Now()
	defer func() {
		if d := time.Since(start); d > slowWait && !t.Failed() {
			t.Logf("waited %s for %s", d.Round(100*time.Millisecond), what)
		}
	}()
	var lastErr error
	err := wait.PollUntilContextTimeout(t.Context(), 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		ok, err := cond(ctx)
		if err != nil {
			lastErr = err
			return false, nil
		}
		return ok, nil
	})
	if err != nil {
		t.Fatalf("timed out after %s waiting for %s (last error: %v)", timeout, what, lastErr)
	}
}

// slowWait is the wait eventually logs.
const slowWait = 5 * time.Second

// consistently checks cond every 500ms for the whole duration.
func consistently(t *testing.T, d time.Duration, what string, cond func(ctx context.Context) error) {
	t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if err := cond(t.Context()); err != nil {
			t.Fatalf("%s stopped holding: %v", what, err)
		}
		select {
		case <-t.Context().Done():
			return
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// scenario is one end-to-end scenario; TestE2E runs it for every provider
// it applies to.
type scenario struct {
	name string
	run  func(t *testing.T, p cluster.Provider)
	// applies says whether the scenario is one for p; nil: every provider.
	applies func(p cluster.Provider) bool
}

func withLoadBalancers(p cluster.Provider) bool { return p.LoadBalancers }
func withRoutes(p cluster.Provider) bool        { return p.Routes }

// only applies a scenario to one cloud.
func only(name string) func(cluster.Provider) bool {
	return func(p cluster.Provider) bool { return p.Name == name }
}

// scenarios are every scenario of the suite, in the order each provider
// runs them.
var scenarios = []scenario{
	{name: "NodeInitialization", run: testNodeInitialization},
	{name: "NodeLifecycle", run: testNodeLifecycle},
	{name: "APIErrorsDoNotDeleteNodes", run: testAPIErrorsDoNotDeleteNodes},
	{name: "WrongAccountKeepsNodes", run: testWrongAccountKeepsNodes},
	{name: "LoadBalancer", run: testLoadBalancer, applies: withLoadBalancers},
	{name: "ServiceWhileNodesJoin", run: testServiceWhileNodesJoin, applies: withLoadBalancers},
	{name: "LeaderFailover", run: testLeaderFailover, applies: withLoadBalancers},
	{name: "Routes", run: testRoutes, applies: withRoutes},
	{name: "NoCredentialInLogAtV10", run: testNoCredentialInLogAtV10},
	{name: "Examples", run: testExamples, applies: hasExamples},
	{name: "Soak", run: testSoak, applies: withLoadBalancers},
	{name: "PublicAccessFirewall", run: testDigitalOceanPublicAccessFirewall, applies: only("digitalocean")},
	{name: "AsShipped", run: testRancherAsShipped, applies: only("rancher")},
	{name: "AsShipped", run: testTritonAsShipped, applies: only("triton")},
}

// TestE2E runs every scenario for every provider in
// internal/cluster.Providers: the providers side by side (-parallel), each
// on one control plane of its own that its scenarios take turns on.
func TestE2E(t *testing.T) {
	t.Parallel()
	for _, p := range cluster.Providers {
		t.Run(p.Name, func(t *testing.T) {
			t.Parallel()
			for _, s := range scenarios {
				if s.applies == nil || s.applies(p) {
					t.Run(s.name, func(t *testing.T) { s.run(t, p) })
				}
			}
		})
	}
}

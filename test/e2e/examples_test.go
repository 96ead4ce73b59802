package e2e

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/yaml"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
	"github.com/ccmkit/ccmkit/internal/cluster"
)

// How a cloud plugs into TestE2E/<cloud>/Examples: its
// examples_<cloud>_test.go calls registerExamples from an init function
// with the cloud's name (its entry in cluster.Providers and its directory
// examples/services/<name>) and a function returning its examplesCloud:
// the simulator to start, what to create in it before the examples are
// applied (Seed), and one exampleCheck per file of the directory, keyed by
// file name. The scenario then runs, on the cloud's control plane, the
// simulator and the real CCM binary, initializes two Nodes, creates every example Service at once,
// unchanged, and polls each check until it holds. Besides the checks it
// asserts, for every example: the file is one v1 Service called
// example-<file name without .yaml> in namespace default, of type
// LoadBalancer with a selector, with a header comment; the Service gets
// the load-balancer finalizer, the provider's load balancer ID annotation
// naming a load balancer the cloud holds, and an ingress whose addresses
// are that load balancer's (simkit.LoadBalancer.Addresses). At the end
// the cloud holds no load balancer that no example names, and no Warning
// Event was raised. A file without a check, or a check without a file,
// fails the cloud's test.

// examplesCloud is one cloud's part of the Examples scenario.
type examplesCloud struct {
	// StartCloud starts the cloud's simulator: its StartCloud, as a
	// simkit.Cloud. The harness starts it itself so that Seed and the
	// checks reach its own state accessors (run.Cloud.(*dosim.Cloud)).
	StartCloud func(simkit.Common) simkit.Cloud
	// Seed, when set, creates in the simulated cloud what the examples
	// name (a certificate, a load balancer to adopt), with the IDs the
	// files give; where the cloud picks the ID, it fails the test when
	// it differs from the file's. It runs before the CCM starts.
	Seed func(t *testing.T, run *examplesRun)
	// Checks has one check per file of examples/services/<cloud>/, by
	// file name ("tcp.yaml").
	Checks map[string]exampleCheck
}

// exampleCheck reports whether the cloud holds what one example promises:
// nil when it does, an error saying what differs while it does not (yet).
// It reads the cloud through the cloud's SDK pointed at the simulator, or
// the simulator's own accessors. The harness calls it only once the
// Service has its finalizer and ingress and names a load balancer the
// cloud holds, until it returns nil or a minute has passed.
type exampleCheck func(ctx context.Context, run *examplesRun, ex exampleState) error

// examplesRun is a running TestE2E/<cloud>/Examples.
type examplesRun struct {
	Cluster *cluster.Cluster
	// Cloud is the simulator StartCloud returned.
	Cloud simkit.Cloud
	// Nodes maps the initialized Nodes' names to their instances' cloud
	// IDs (empty in Seed, which runs before they are added).
	Nodes map[string]string
}

// NodeIDs are the cloud IDs of the run's Nodes, sorted, as
// simkit.LoadBalancer.Members lists them.
func (r *examplesRun) NodeIDs() []string { return slices.Sorted(maps.Values(r.Nodes)) }

// exampleState is one example as the cluster and the cloud hold it now.
type exampleState struct {
	// File is the example's file name ("tcp.yaml").
	File string
	// Service is the Service as the API server holds it.
	Service *corev1.Service
	// LB is the cloud's load balancer that the Service's load balancer ID
	// annotation (cluster.Provider.LBIDAnnotation) names.
	LB simkit.LoadBalancer
}

// exampleClouds are the clouds registered with registerExamples.
var exampleClouds = map[string]func() examplesCloud{}

// registerExamples adds a cloud's Examples scenario. Call it from the init
// function of examples_<name>_test.go.
func registerExamples(name string, newCloud func() examplesCloud) {
	if _, dup := exampleClouds[name]; dup {
		panic("registerExamples: " + name + " registered twice")
	}
	exampleClouds[name] = newCloud
}

// examplesDir is examples/services, relative to this package.
const examplesDir = "../../examples/services"

// hasExamples: the provider has a directory examples/services/<name>.
func hasExamples(p cluster.Provider) bool {
	fi, err := os.Stat(filepath.Join(examplesDir, p.Name))
	return err == nil && fi.IsDir()
}

// TestExamplesTable checks, without a cluster, that every directory of
// examples/services has a registered cloud and every registered cloud a
// directory, and that examples/services/README.md's table links every
// example; TestE2E/<cloud>/Examples applies them.
func TestExamplesTable(t *testing.T) {
	entries, err := os.ReadDir(examplesDir)
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, e := range entries {
		if e.IsDir() {
			dirs = append(dirs, e.Name())
		}
	}
	for _, name := range slices.Sorted(maps.Keys(exampleClouds)) {
		if !slices.Contains(dirs, name) {
			t.Errorf("examples for %s are registered, but there is no directory %s/%s", name, examplesDir, name)
		}
	}
	for _, name := range dirs {
		if _, ok := exampleClouds[name]; !ok {
			t.Errorf("%s/%s has no checks: register them in examples_%s_test.go", examplesDir, name, name)
		}
		if _, ok := cluster.Lookup(name); !ok {
			t.Errorf("%s/%s: no provider %s in cluster.Providers", examplesDir, name, name)
		}
	}
	checkExamplesTable(t)
}

// tableLink is a link to an example in examples/services/README.md's
// table: "](<cloud>/<kind>.yaml)".
var tableLink = regexp.MustCompile(`\]\(([a-z0-9-]+/[a-z0-9-]+\.yaml)\)`)

// checkExamplesTable checks that the table of kinds and clouds in
// examples/services/README.md links every example file and no other.
func checkExamplesTable(t *testing.T) {
	t.Helper()
	readme, err := os.ReadFile(filepath.Join(examplesDir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var linked []string
	for _, m := range tableLink.FindAllStringSubmatch(string(readme), -1) {
		linked = append(linked, m[1])
	}
	files, err := filepath.Glob(filepath.Join(examplesDir, "*", "*"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		rel := filepath.ToSlash(strings.TrimPrefix(f, examplesDir+string(filepath.Separator)))
		if !slices.Contains(linked, rel) {
			t.Errorf("%s is not in the table of %s/README.md", rel, examplesDir)
		}
	}
	for _, l := range linked {
		if _, err := os.Stat(filepath.Join(examplesDir, l)); err != nil {
			t.Errorf("%s/README.md links %s, which is not there", examplesDir, l)
		}
	}
}

// example is one file of examples/services/<cloud>/, decoded.
type example struct {
	file    string
	service *corev1.Service
}

// testExamples applies every file under examples/services/<cloud>/ to a
// cluster of that cloud and checks the cloud state each promises; see
// registerExamples. The example files name namespace default, so the
// scenario keeps its Services there.
func testExamples(t *testing.T, p cluster.Provider) {
	newCloud, ok := exampleClouds[p.Name]
	if !ok {
		t.Fatalf("%s/%s has no checks: register them in examples_%s_test.go", examplesDir, p.Name, p.Name)
	}
	cloud := newCloud()
	examples := readExamples(t, filepath.Join(examplesDir, p.Name), cloud.Checks)
	run := &examplesRun{}
	run.Cluster = attach(t, planes.get(t, p), cluster.AttachOptions{
		WorkDir:   t.TempDir(),
		Namespace: metav1.NamespaceDefault,
		StartSim: func(o cluster.SimOptions) (cluster.Sim, error) {
			run.Cloud = cloud.StartCloud(o)
			return cluster.AsSim(run.Cloud), nil
		},
	})
	c := run.Cluster
	if cloud.Seed != nil {
		cloud.Seed(t, run)
	}
	if _, err := c.StartCCM("ccm"); err != nil {
		t.Fatal(err)
	}
	run.Nodes = addNodes(t, c, "node", 2)
	for _, ex := range examples {
		if _, err := c.Kube.CoreV1().Services(ex.service.Namespace).Create(t.Context(), ex.service, metav1.CreateOptions{}); err != nil {
			t.Fatalf("%s: %v", ex.file, err)
		}
	}
	applied := time.Now()
	named := map[string]bool{}
	for _, ex := range examples {
		st, err := awaitExample(t.Context(), applied.Add(exampleTimeout), c, run, ex, cloud.Checks[ex.file])
		if err != nil {
			t.Errorf("%s: not the cloud state it promises %s after applying: %v", ex.file, exampleTimeout, err)
			continue
		}
		named[st.LB.ID] = true
		t.Logf("%s: holds %s after applying", ex.file, time.Since(applied).Round(100*time.Millisecond))
	}
	if t.Failed() {
		return
	}
	for _, lb := range c.Sim.LoadBalancers() {
		if !named[lb.ID] {
			t.Errorf("the cloud holds load balancer %s (%s) that no example names", lb.ID, lb.Name)
		}
	}
	noWarnings(t, c)
}

// exampleTimeout is how long after they are applied every example must
// hold what it promises.
const exampleTimeout = time.Minute

// awaitExample polls an example until it holds what every example and its
// check promise, or deadline passes; the error is then the last reason it
// did not hold. Past the deadline (spent waiting for another example) it
// still has a few seconds to look.
func awaitExample(ctx context.Context, deadline time.Time, c *cluster.Cluster, run *examplesRun, ex example, check exampleCheck) (exampleState, error) {
	if late := time.Now().Add(3 * time.Second); deadline.Before(late) {
		deadline = late
	}
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	var st exampleState
	var why error
	err := wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		var err error
		if st, err = exampleNow(ctx, c, ex); err == nil {
			err = check(ctx, run, st)
		}
		if err != nil && ctx.Err() == nil {
			why = err // not the deadline cutting a request short
		}
		return err == nil, nil
	})
	if err != nil {
		return st, cmp.Or(why, err)
	}
	return st, nil
}

// exampleNow reads an example's Service and the load balancer it names,
// and checks what every example promises: finalizer, ingress, the load
// balancer's addresses in it.
func exampleNow(ctx context.Context, c *cluster.Cluster, ex example) (exampleState, error) {
	svc, err := c.Kube.CoreV1().Services(ex.service.Namespace).Get(ctx, ex.service.Name, metav1.GetOptions{})
	if err != nil {
		return exampleState{}, err
	}
	st := exampleState{File: ex.file, Service: svc}
	if !slices.Contains(svc.Finalizers, lbFinalizer) {
		return st, errors.New("no load-balancer finalizer yet")
	}
	id := svc.Annotations[c.Provider.LBIDAnnotation]
	i := slices.IndexFunc(c.Sim.LoadBalancers(), func(lb simkit.LoadBalancer) bool { return id != "" && lb.ID == id })
	if i < 0 {
		return st, fmt.Errorf("annotation %s=%q names no load balancer in the cloud", c.Provider.LBIDAnnotation, id)
	}
	st.LB = c.Sim.LoadBalancers()[i]
	var ingress []string
	for _, in := range svc.Status.LoadBalancer.Ingress {
		ingress = append(ingress, slices.DeleteFunc([]string{in.IP, in.Hostname}, func(a string) bool { return a == "" })...)
	}
	slices.Sort(ingress)
	if len(ingress) == 0 || !slices.Equal(ingress, st.LB.Addresses) {
		return st, fmt.Errorf("ingress %v, want the load balancer's addresses %v", ingress, st.LB.Addresses)
	}
	return st, nil
}

// readExamples decodes every file of dir, strictly, checks what every
// example must be, and that checks has exactly one entry per file.
func readExamples(t *testing.T, dir string, checks map[string]exampleCheck) []example {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples in %s (%v)", dir, err)
	}
	var out []example
	for _, f := range files {
		file := filepath.Base(f)
		if checks[file] == nil {
			t.Errorf("%s: no check: add one to the cloud's examplesCloud.Checks", f)
			continue
		}
		svc, err := decodeExample(f)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		out = append(out, example{file: file, service: svc})
	}
	for _, file := range slices.Sorted(maps.Keys(checks)) {
		if _, err := os.Stat(filepath.Join(dir, file)); err != nil {
			t.Errorf("a check names %s, which is not in %s", file, dir)
		}
	}
	if t.Failed() {
		t.FailNow()
	}
	return out
}

// decodeExample reads one example file: a header comment and exactly one
// v1 Service as every example must be, with no field the API does not
// know.
func decodeExample(path string) (*corev1.Service, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if !strings.HasSuffix(path, ".yaml") {
		return nil, errors.New("an example's name ends in .yaml")
	}
	if !strings.HasPrefix(string(b), "#") {
		return nil, errors.New("no header comment saying what the example makes in the cloud")
	}
	if strings.Contains(string(b), "\n---") {
		return nil, errors.New("more than one object: an example is one Service")
	}
	var svc corev1.Service
	if err := yaml.UnmarshalStrict(b, &svc); err != nil {
		return nil, err
	}
	want := "example-" + strings.TrimSuffix(filepath.Base(path), ".yaml")
	switch {
	case svc.APIVersion != "v1" || svc.Kind != "Service":
		return nil, fmt.Errorf("%s %s, want a v1 Service", svc.APIVersion, svc.Kind)
	case svc.Name != want || svc.Namespace != metav1.NamespaceDefault:
		return nil, fmt.Errorf("Service %s/%s, want %s/%s", svc.Namespace, svc.Name, metav1.NamespaceDefault, want)
	case svc.Spec.Type != corev1.ServiceTypeLoadBalancer:
		return nil, fmt.Errorf("type %q, want LoadBalancer", svc.Spec.Type)
	case len(svc.Spec.Selector) == 0:
		return nil, errors.New("no selector")
	}
	return &svc, nil
}

// ingressIPMode checks that the Service has ingress and every ingress
// has ipMode mode.
func ingressIPMode(svc *corev1.Service, mode corev1.LoadBalancerIPMode) error {
	in := svc.Status.LoadBalancer.Ingress
	if len(in) == 0 {
		return errors.New("no ingress")
	}
	for _, i := range in {
		if i.IPMode == nil || *i.IPMode != mode {
			return fmt.Errorf("ingress %+v, want ipMode %s", i, mode)
		}
	}
	return nil
}

// isPrivateIP reports whether s is a private address (RFC 1918, or an
// IPv6 unique local one).
func isPrivateIP(s string) bool {
	a, err := netip.ParseAddr(s)
	return err == nil && a.IsPrivate()
}

package digitalocean_test

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/digitalocean/godo"
	corev1 "k8s.io/api/core/v1"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/framework/cloudapi"
	"github.com/ccmkit/ccmkit/framework/frameworktest"
	"github.com/ccmkit/ccmkit/providers/digitalocean"
	"github.com/ccmkit/ccmkit/providers/digitalocean/dosim"
)

// lbTag is the DO_LB_DROPLET_TAG of the tests in tag mode.
const lbTag = "k8s-test-lb-nodes"

// newTagFixture is newLBFixture with DO_LB_DROPLET_TAG set.
func newTagFixture(t *testing.T, opts frameworktest.LBOptions) *lbFixture {
	t.Helper()
	opts.Env = map[string]string{"DO_LB_DROPLET_TAG": lbTag}
	opts.NewProvider = func() framework.Provider { return digitalocean.New() }
	return newLBFixture(t, opts)
}

// tagged returns the IDs of the droplets carrying tag, sorted.
func tagged(sim *dosim.Server, tag string) []int {
	var ids []int
	for _, d := range sim.Droplets() {
		if slices.Contains(d.Tags, tag) {
			ids = append(ids, d.ID)
		}
	}
	slices.Sort(ids)
	return ids
}

// nodeDroplets returns the droplet IDs of nodes, sorted.
func nodeDroplets(t *testing.T, nodes []*corev1.Node) []int {
	t.Helper()
	var ids []int
	for _, n := range nodes {
		id, err := strconv.Atoi(strings.TrimPrefix(n.Spec.ProviderID, "digitalocean://"))
		if err != nil {
			t.Fatalf("node %s: providerID %q", n.Name, n.Spec.ProviderID)
		}
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// callsDuring returns the API calls the simulator served while fn ran,
// per operation, and their total.
func callsDuring(sim *dosim.Server, fn func()) (map[string]int, int) {
	before := sim.Stats()
	fn()
	calls, total := map[string]int{}, 0
	for op, n := range sim.Stats() {
		if d := n - before[op]; d > 0 {
			calls[op] = d
			total += d
		}
	}
	return calls, total
}

// TestTagModeCreates: with DO_LB_DROPLET_TAG, a new load balancer targets
// the tag (the API refuses tag with droplet_ids, so it has none), the tag
// is on exactly the nodes' droplets, and a second sync makes no call
// beyond the pipeline's own reads.
func TestTagModeCreates(t *testing.T) {
	f := newTagFixture(t, frameworktest.LBOptions{})
	other := f.sim.AddDroplet(dosim.Droplet{Name: "not-a-node", Tags: []string{"team:db"}})
	svc := f.Service(t, "web", nil)
	f.EnsureReady(t, svc)
	lb := f.only(t)
	if lb.Tag != lbTag {
		t.Fatalf("load balancer tag = %q, want %q", lb.Tag, lbTag)
	}
	if got, want := tagged(f.sim, lbTag), nodeDroplets(t, f.Nodes); !slices.Equal(got, want) {
		t.Errorf("droplets tagged %v, want the nodes' %v", got, want)
	}
	if got := lb.DropletIDs; !slices.Equal(got, nodeDroplets(t, f.Nodes)) {
		t.Errorf("the load balancer serves %v, want the nodes' droplets", got)
	}
	if d := dropletByID(t, f.sim, other.ID); !slices.Equal(d.Tags, []string{"team:db"}) {
		t.Errorf("a droplet that is no node was touched: tags %v", d.Tags)
	}
	calls, _ := callsDuring(f.sim, func() { f.EnsureReady(t, svc) })
	for op := range calls {
		if strings.Contains(op, "tags") || !strings.HasPrefix(op, "GET ") {
			t.Errorf("a sync with nothing changed called %s (%v)", op, calls)
		}
	}
}

func dropletByID(t *testing.T, sim *dosim.Server, id int) dosim.Droplet {
	t.Helper()
	for _, d := range sim.Droplets() {
		if d.ID == id {
			return d
		}
	}
	t.Fatalf("no droplet %d", id)
	return dosim.Droplet{}
}

// readyServices makes n LoadBalancer Services, each synced until its load
// balancer is ready.
func readyServices(t *testing.T, f *lbFixture, n int) []*corev1.Service {
	t.Helper()
	var svcs []*corev1.Service
	for i := range n {
		svc := f.Service(t, fmt.Sprintf("web-%02d", i), nil)
		f.EnsureReady(t, svc)
		svcs = append(svcs, svc)
	}
	return svcs
}

// TestTagModeNodeChurn: with 20 load balancers on the tag, a node joining
// costs the first sync one tag call and the other 19 nothing (no PUT);
// a node whose droplet is deleted, and one excluded from load balancers,
// lose the tag the same way.
func TestTagModeNodeChurn(t *testing.T) {
	const lbs = 20
	f := newTagFixture(t, frameworktest.LBOptions{})
	svcs := readyServices(t, f, lbs)
	// The node sync of the service controller: UpdateLoadBalancer for
	// every Service, with the new node set.
	syncAll := func(what string) (map[string]int, int) {
		return callsDuring(f.sim, func() {
			for _, svc := range svcs {
				if err := f.Update(t, svc); err != nil {
					t.Fatalf("%s: UpdateLoadBalancer(%s): %v", what, svc.Name, err)
				}
			}
		})
	}
	check := func(what string) {
		t.Helper()
		want := nodeDroplets(t, f.Nodes)
		if got := tagged(f.sim, lbTag); !slices.Equal(got, want) {
			t.Errorf("%s: droplets tagged %v, want the nodes' %v", what, got, want)
		}
		for _, lb := range f.sim.LoadBalancers() {
			if lb.Tag != lbTag || !slices.Equal(lb.DropletIDs, want) {
				t.Errorf("%s: load balancer %s targets %q, serves %v; want %q, %v", what, lb.Name, lb.Tag, lb.DropletIDs, lbTag, want)
			}
		}
	}

	f.AddNodes("node-c")
	calls, total := syncAll("join")
	t.Logf("a node joining %d load balancers: %d calls %v", lbs, total, calls)
	if total > 5 || calls["PUT /v2/load_balancers/{id}"] > 0 {
		t.Errorf("a node joining %d load balancers made %d calls (%v), want at most 5 and no PUT", lbs, total, calls)
	}
	check("join")

	// node-c's droplet is deleted, then its Node (what the node lifecycle
	// controller does): the memo still has it, the untag is refused, and
	// the tag is read again.
	gone := nodeDroplets(t, f.Nodes[2:])[0]
	f.sim.DeleteDroplet(gone)
	f.Nodes = f.Nodes[:2]
	calls, total = syncAll("leave")
	t.Logf("a deleted node leaving %d load balancers: %d calls %v", lbs, total, calls)
	if total > 5 || calls["PUT /v2/load_balancers/{id}"] > 0 {
		t.Errorf("a node leaving %d load balancers made %d calls (%v), want at most 5 and no PUT", lbs, total, calls)
	}
	check("leave")

	// node-b gets node.kubernetes.io/exclude-from-external-load-balancers:
	// the service controller leaves it out of every sync's nodes.
	excluded := f.Nodes[0]
	if excluded.Name != "node-b" {
		t.Fatalf("first node is %s", excluded.Name)
	}
	f.Nodes = f.Nodes[1:]
	calls, total = syncAll("exclude")
	if total > 5 || calls["PUT /v2/load_balancers/{id}"] > 0 {
		t.Errorf("excluding a node from %d load balancers made %d calls (%v), want at most 5 and no PUT", lbs, total, calls)
	}
	check("exclude")
	if d := dropletByID(t, f.sim, nodeDroplets(t, []*corev1.Node{excluded})[0]); slices.Contains(d.Tags, lbTag) {
		t.Errorf("the excluded node's droplet keeps the tag: %v", d.Tags)
	}
	// Back in: tagged again.
	f.Nodes = append(f.Nodes, excluded)
	syncAll("include")
	check("include")
}

// TestTagModeDropletGoneBeforeNode: a droplet deleted while its Node is
// still there (until the node lifecycle controller deletes it) leaves the
// tag with it. A CCM that reads the tag then (a new leader) leaves that
// node out instead of failing every sync on a droplet it cannot tag, and
// the Node's going costs nothing more.
func TestTagModeDropletGoneBeforeNode(t *testing.T) {
	const lbs = 5
	f := newTagFixture(t, frameworktest.LBOptions{})
	svcs := readyServices(t, f, lbs)
	gone := nodeDroplets(t, f.Nodes[:1])[0]
	f.sim.DeleteDroplet(gone)
	lb := f.Start(t) // a new leader: an empty memo
	syncAll := func(what string) (map[string]int, int) {
		return callsDuring(f.sim, func() {
			for _, svc := range svcs {
				if err := lb.UpdateLoadBalancer(f.Ctx, f.ClusterName, f.Fresh(t, svc), f.Nodes); err != nil {
					t.Errorf("%s: UpdateLoadBalancer(%s): %v", what, svc.Name, err)
				}
			}
		})
	}
	calls, total := syncAll("droplet gone")
	// The new leader's list of load balancers, the tag and the droplets.
	if total > 3 || calls["POST /v2/tags/{name}/resources"]+calls["DELETE /v2/tags/{name}/resources"]+calls["PUT /v2/load_balancers/{id}"] > 0 {
		t.Errorf("with a node's droplet gone: %d calls %v, want three reads and no write", total, calls)
	}
	f.Nodes = f.Nodes[1:]
	if calls, total := syncAll("node gone"); total != 0 {
		t.Errorf("its Node going: %d calls %v, want none", total, calls)
	}
	if got, want := tagged(f.sim, lbTag), nodeDroplets(t, f.Nodes); !slices.Equal(got, want) {
		t.Errorf("droplets tagged %v, want the nodes' %v", got, want)
	}
}

// TestTagModeRestart: a new CCM (an empty memo) reads the tag once, takes
// it off a droplet that is no node any more, leaves other droplets alone,
// and writes nothing when the nodes have it.
func TestTagModeRestart(t *testing.T) {
	f := newTagFixture(t, frameworktest.LBOptions{})
	svc := f.Service(t, "web", nil)
	f.EnsureReady(t, svc)
	// A droplet that was a node when the first CCM stopped, and one that
	// never was.
	former := f.sim.AddDroplet(dosim.Droplet{Name: "former-node", Tags: []string{lbTag, "keep"}})
	bystander := f.sim.AddDroplet(dosim.Droplet{Name: "bystander", Tags: []string{"keep"}})

	lb := f.Start(t)
	update := func() {
		if err := lb.UpdateLoadBalancer(f.Ctx, f.ClusterName, f.Fresh(t, svc), f.Nodes); err != nil {
			t.Fatalf("UpdateLoadBalancer: %v", err)
		}
	}
	calls, _ := callsDuring(f.sim, update)
	if got, want := tagged(f.sim, lbTag), nodeDroplets(t, f.Nodes); !slices.Equal(got, want) {
		t.Errorf("droplets tagged %v, want the nodes' %v", got, want)
	}
	if calls["DELETE /v2/tags/{name}/resources"] != 1 || calls["POST /v2/tags/{name}/resources"] != 0 || calls["PUT /v2/load_balancers/{id}"] != 0 {
		t.Errorf("calls = %v, want one untag and no other write", calls)
	}
	if d := dropletByID(t, f.sim, former.ID); !slices.Equal(d.Tags, []string{"keep"}) {
		t.Errorf("former node's tags = %v, want [keep]", d.Tags)
	}
	if d := dropletByID(t, f.sim, bystander.ID); !slices.Equal(d.Tags, []string{"keep"}) {
		t.Errorf("bystander's tags = %v, want [keep]", d.Tags)
	}
	// Another new CCM with everything in place: reads, no write.
	lb = f.Start(t)
	if w := f.WritesDuring(update); w != 0 {
		t.Errorf("a new CCM with the tag in place made %d writes", w)
	}
}

// TestTagModeCreatesTheTag: the tag need not exist; the CCM creates it.
// A tag deleted behind its back (which untags every droplet) is noticed
// at the next node change, by the refused write.
func TestTagModeCreatesTheTag(t *testing.T) {
	f := newTagFixture(t, frameworktest.LBOptions{})
	if slices.Contains(f.sim.State().Tags, lbTag) {
		t.Fatal("the tag exists before the test")
	}
	svc := f.Service(t, "web", nil)
	f.EnsureReady(t, svc)
	if !slices.Contains(f.sim.State().Tags, lbTag) {
		t.Fatal("the tag was not created")
	}
	deleteTag(t, f.sim, lbTag)
	f.AddNodes("node-c")
	if err := f.Update(t, svc); err != nil {
		t.Fatal(err)
	}
	if got, want := tagged(f.sim, lbTag), nodeDroplets(t, f.Nodes); !slices.Equal(got, want) {
		t.Errorf("droplets tagged %v, want the nodes' %v", got, want)
	}
}

// deleteTag deletes a tag as a user would, through the API.
func deleteTag(t *testing.T, sim *dosim.Server, tag string) {
	t.Helper()
	c, err := godo.New(cloudapi.WithBearerToken(http.DefaultClient, strings.TrimPrefix(sim.URL(), "http://"), func() (string, error) { return sim.Token(), nil }),
		godo.SetBaseURL(sim.URL()+"/"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Tags.Delete(t.Context(), tag); err != nil {
		t.Fatal(err)
	}
}

// TestTagModeSwitch: the droplet-targets annotation and DO_LB_DROPLET_TAG
// move a load balancer between droplet IDs and the tag, in one PUT each
// way, with the tag on the nodes before the load balancer targets it.
func TestTagModeSwitch(t *testing.T) {
	key := digitalocean.AnnotationPrefix + "droplet-targets"
	f := newTagFixture(t, frameworktest.LBOptions{})
	svc := f.Service(t, "web", map[string]string{key: "droplet-ids"})
	f.EnsureReady(t, svc)
	nodes := nodeDroplets(t, f.Nodes)
	if lb := f.only(t); lb.Tag != "" || !slices.Equal(lb.DropletIDs, nodes) {
		t.Fatalf("droplet-ids: tag %q droplets %v", lb.Tag, lb.DropletIDs)
	}
	if got := tagged(f.sim, lbTag); len(got) != 0 {
		t.Errorf("a load balancer listing droplets tagged %v", got)
	}

	move := func(what string, mutate func(*corev1.Service), wantTag string) {
		t.Helper()
		f.UpdateService(t, svc, mutate)
		calls, _ := callsDuring(f.sim, func() { f.EnsureReady(t, svc) })
		lb := f.only(t)
		if lb.Tag != wantTag || !slices.Equal(lb.DropletIDs, nodes) {
			t.Errorf("%s: tag %q droplets %v, want %q %v", what, lb.Tag, lb.DropletIDs, wantTag, nodes)
		}
		if calls["PUT /v2/load_balancers/{id}"] != 1 || calls["POST /v2/load_balancers"] != 0 {
			t.Errorf("%s: calls %v, want one PUT", what, calls)
		}
	}
	move("to the tag", func(s *corev1.Service) { delete(s.Annotations, key) }, lbTag)
	if got := tagged(f.sim, lbTag); !slices.Equal(got, nodes) {
		t.Errorf("droplets tagged %v, want %v", got, nodes)
	}
	move("back to droplet IDs", func(s *corev1.Service) { s.Annotations[key] = "DROPLET-IDS" }, "")

	// The setting: a CCM without DO_LB_DROPLET_TAG moves a tag load
	// balancer to droplet IDs at its next sync.
	move("to the tag again", func(s *corev1.Service) { s.Annotations[key] = "tag" }, lbTag)
	lb := f.Start(t, func(env *framework.Env) {
		vars := map[string]string{}
		for _, k := range []string{"DO_ACCESS_TOKEN", "DO_OVERRIDE_URL", "REGION"} {
			vars[k], _ = env.LookupEnv(k)
		}
		env.LookupEnv = func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
	})
	f.UpdateService(t, svc, func(s *corev1.Service) { delete(s.Annotations, key) })
	calls, _ := callsDuring(f.sim, func() {
		if err := lb.UpdateLoadBalancer(f.Ctx, f.ClusterName, f.Fresh(t, svc), f.Nodes); err != nil {
			t.Fatalf("UpdateLoadBalancer: %v", err)
		}
	})
	if got := f.only(t); got.Tag != "" || !slices.Equal(got.DropletIDs, nodes) || calls["PUT /v2/load_balancers/{id}"] != 1 {
		t.Errorf("without DO_LB_DROPLET_TAG: tag %q droplets %v calls %v; want droplet IDs in one PUT", got.Tag, got.DropletIDs, calls)
	}
}

// TestTagModeAdoption: a load balancer made elsewhere with droplet_ids
// keeps them when its Service says droplet-ids, and moves to the tag when
// it does not.
func TestTagModeAdoption(t *testing.T) {
	key := digitalocean.AnnotationPrefix + "droplet-targets"
	for _, tc := range []struct {
		ann     map[string]string
		wantTag string
	}{{map[string]string{key: "droplet-ids"}, ""}, {nil, lbTag}} {
		f := newTagFixture(t, frameworktest.LBOptions{})
		nodes := nodeDroplets(t, f.Nodes)
		old := f.sim.AddLoadBalancer(dosim.LoadBalancer{
			Name: "adopted", Type: "REGIONAL_NETWORK", DropletIDs: nodes,
			ForwardingRules: []dosim.ForwardingRule{{EntryProtocol: "tcp", EntryPort: 80, TargetProtocol: "tcp", TargetPort: 30080}},
		})
		ann := map[string]string{digitalocean.AnnotationLoadBalancerID: old.ID, digitalocean.AnnotationPrefix + "name": "adopted"}
		maps.Copy(ann, tc.ann)
		f.EnsureReady(t, f.Service(t, "web", ann))
		if lb := f.only(t); lb.ID != old.ID || lb.Tag != tc.wantTag || !slices.Equal(lb.DropletIDs, nodes) {
			t.Errorf("annotations %v: adopted load balancer %s targets %q, serves %v; want %q, %v", tc.ann, lb.ID, lb.Tag, lb.DropletIDs, tc.wantTag, nodes)
		}
	}
}

// TestTagAnnotationNeedsTheSetting: droplet-targets tag on a CCM without
// DO_LB_DROPLET_TAG is a Warning naming both, and no write.
func TestTagAnnotationNeedsTheSetting(t *testing.T) {
	key := digitalocean.AnnotationPrefix + "droplet-targets"
	f := newLBFixture(t, frameworktest.LBOptions{})
	svc := f.Service(t, "web", map[string]string{key: "tag"})
	var err error
	if w := f.WritesDuring(func() { _, err = f.Ensure(t, svc) }); w != 0 {
		t.Errorf("%d writes", w)
	}
	if err == nil || !strings.Contains(err.Error(), key) || !strings.Contains(err.Error(), "DO_LB_DROPLET_TAG") {
		t.Fatalf("err = %v, want one naming %s and DO_LB_DROPLET_TAG", err, key)
	}
	if evs := f.Drain(); len(evs) == 0 || !strings.HasPrefix(evs[0], "Warning") {
		t.Errorf("events = %q, want a Warning", evs)
	}
}

// TestTagModeRequestOlderThanAJoin: the service controller syncs several
// Services at once, so a sync that listed the Nodes before node-c joined
// can reach the tag after one that listed them after and tagged node-c's
// droplet. The older request gets node-c from the Node informer the
// service controller reads (the framework's lbnodes.go), and the tag
// keeps it: one tag call for the join, none taking it back.
func TestTagModeRequestOlderThanAJoin(t *testing.T) {
	f := newTagFixture(t, frameworktest.LBOptions{})
	before := slices.Clone(f.Nodes)
	f.AddNodes("node-c")
	f.LB = f.StartWithNodeInformer(t, nil)

	a, b := f.Service(t, "a", nil), f.Service(t, "b", nil)
	ensure := func(svc *corev1.Service, nodes []*corev1.Node) {
		t.Helper()
		for range 10 {
			if _, err := f.LB.EnsureLoadBalancer(f.Ctx, f.ClusterName, f.Fresh(t, svc), nodes); err == nil {
				return
			}
		}
		t.Fatalf("load balancer of %s not ready after ten syncs", svc.Name)
	}
	ensure(a, before)
	ensure(b, before)
	if got, want := tagged(f.sim, lbTag), nodeDroplets(t, before); !slices.Equal(got, want) {
		t.Fatalf("before the join: droplets tagged %v, want %v", got, want)
	}

	calls, _ := callsDuring(f.sim, func() {
		if err := f.Update(t, a); err != nil {
			t.Fatalf("UpdateLoadBalancer with node-c: %v", err)
		}
		if err := f.LB.UpdateLoadBalancer(f.Ctx, f.ClusterName, f.Fresh(t, b), before); err != nil {
			t.Fatalf("UpdateLoadBalancer with the Nodes of before the join: %v", err)
		}
	})
	if got, want := tagged(f.sim, lbTag), nodeDroplets(t, f.Nodes); !slices.Equal(got, want) {
		t.Errorf("after a request older than the join: droplets tagged %v, want %v", got, want)
	}
	writes := 0
	for op, n := range calls {
		if strings.HasSuffix(op, "/resources") {
			writes += n
		}
	}
	if n := writes; n != 1 {
		t.Errorf("a node joining, with a request older than the join among the new ones: %d tag writes (%v), want 1", n, calls)
	}
}

package triton

import (
	"context"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/joyent/triton-go/network"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2/ktesting"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/framework/cloudapi"
	"github.com/ccmkit/ccmkit/framework/frameworktest"
	"github.com/ccmkit/ccmkit/providers/triton/tritonsim"
)

// fwFixture is a simulated account with two node machines (and Nodes for
// them), a machine that is no node, and rules the account's users wrote.
type fwFixture struct {
	t     *testing.T
	ctx   context.Context
	sim   *tritonsim.Server
	kube  *fake.Clientset
	nodes []string // the nodes' machine UUIDs
	other string   // a machine that is not a node
	user  []tritonsim.FirewallRule
}

func newFWFixture(t *testing.T) *fwFixture {
	_, ctx := ktesting.NewTestContext(t)
	f := &fwFixture{t: t, ctx: ctx, sim: tritonsim.NewServer(t, tritonsim.Options{}), kube: frameworktest.NewClientset()}
	for _, name := range []string{"node-a", "node-b"} {
		m := f.sim.AddMachine(tritonsim.Machine{Name: name, Tags: map[string]any{"role": "k8s"}})
		f.nodes = append(f.nodes, m.ID)
		f.addNode(name, m.ID)
	}
	f.other = f.sim.AddMachine(tritonsim.Machine{Name: "db"}).ID
	for _, r := range []tritonsim.FirewallRule{
		{Rule: "FROM any TO all vms ALLOW tcp PORT 22", Enabled: true},
		// Looks like ours, but is another cluster's, or a key we do not
		// keep, or the load balancers'.
		{Rule: `FROM any TO tag "k8s-cluster" = "test2" ALLOW tcp PORT 443`, Enabled: true, Description: "k8s-ccm:test2:fw:nodes-tcp"},
		{Rule: "FROM any TO all vms ALLOW tcp PORT 8080", Enabled: false, Description: "k8s-ccm:test:fw:mine"},
		{Rule: "FROM any TO vm " + f.other + " ALLOW tcp PORT 80", Enabled: true, Description: "k8s-ccm:test:lb:" + f.other},
		{Rule: "FROM any TO all vms ALLOW tcp PORT 9090", Enabled: true, Description: "k8s-ccm:test:fw:nodes-tcp:x"},
	} {
		added, err := f.sim.AddFirewallRule(r)
		if err != nil {
			t.Fatal(err)
		}
		f.user = append(f.user, added)
	}
	return f
}

func (f *fwFixture) addNode(name, id string) {
	f.t.Helper()
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.NodeSpec{ProviderID: "triton://" + id}}
	if _, err := f.kube.CoreV1().Nodes().Create(f.ctx, n, metav1.CreateOptions{}); err != nil {
		f.t.Fatal(err)
	}
}

// provider starts the provider on the simulator for cluster "test", with
// extra environment variables.
func (f *fwFixture) provider(vars map[string]string) (*Provider, *framework.Env) {
	f.t.Helper()
	env := f.sim.Env(f.sim.URL())
	env["TRITON_LB_MODE"] = modeCNS
	maps.Copy(env, vars)
	p := New()
	fenv := &framework.Env{
		ClusterName: "test", Client: f.kube,
		LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok },
		CloudAPI:  cloudapi.Options{MaxRetries: -1, Timeout: 5 * time.Second},
	}
	if _, err := framework.NewCloud(f.ctx, p, fenv); err != nil {
		f.t.Fatalf("NewCloud: %v", err)
	}
	fenv.Informers = informers.NewSharedInformerFactory(f.kube, 0)
	return p, fenv
}

// controller is the firewall controller of a provider started with vars,
// its Node informer synced, for the test to call sync on.
func (f *fwFixture) controller(vars map[string]string) *firewallController {
	f.t.Helper()
	p, env := f.provider(vars)
	c, err := p.newFirewallController(env)
	if err != nil {
		f.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(f.ctx)
	f.t.Cleanup(cancel)
	env.Informers.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), c.synced) {
		f.t.Fatal("Node informer did not sync")
	}
	return c
}

func (f *fwFixture) sync(c *firewallController) {
	f.t.Helper()
	if err := c.sync(f.ctx); err != nil {
		f.t.Fatalf("sync: %v", err)
	}
}

// ours are the simulated account's rules with our descriptions, by key.
func (f *fwFixture) ours() map[string]tritonsim.FirewallRule {
	out := map[string]tritonsim.FirewallRule{}
	for _, r := range f.sim.FirewallRules() {
		if isClusterRule("test", &network.FirewallRule{Description: r.Description}) {
			key := strings.TrimPrefix(r.Description, clusterRulePrefix("test"))
			if _, dup := out[key]; dup {
				f.t.Errorf("two rules %s", r.Description)
			}
			out[key] = r
		}
	}
	return out
}

// wantRules checks the account holds exactly the user's rules, unchanged,
// and ours, enabled, with these texts by key.
func (f *fwFixture) wantRules(want map[string]string) {
	f.t.Helper()
	var user []tritonsim.FirewallRule
	for _, r := range f.sim.FirewallRules() {
		if !isClusterRule("test", &network.FirewallRule{Description: r.Description}) {
			user = append(user, r)
		}
	}
	if !slices.Equal(user, f.user) {
		f.t.Errorf("the user's rules are\n%v\nwant them unchanged:\n%v", user, f.user)
	}
	ours := f.ours()
	for key, text := range want {
		if r, ok := ours[key]; !ok || r.Rule != text || !r.Enabled {
			f.t.Errorf("rule %s is %+v, want %q enabled", key, r, text)
		}
	}
	for key, r := range ours {
		if _, ok := want[key]; !ok {
			f.t.Errorf("unexpected rule %+v", r)
		}
	}
}

const fwAmong = `FROM tag "k8s-cluster" = "test" TO tag "k8s-cluster" = "test" ALLOW `

var fwNodeRules = map[string]string{
	fwKeyNodesTCP:  fwAmong + "tcp PORT all",
	fwKeyNodesUDP:  fwAmong + "udp PORT all",
	fwKeyNodesICMP: fwAmong + "icmp TYPE all",
}

// TestFirewallRules: a first sync creates the cluster's rules and tags the
// nodes' machines; a second makes no write; a rule of ours deleted, edited
// or disabled is put back (in place when it still exists); the user's
// rules, including those whose descriptions merely look like ours, are
// never touched.
func TestFirewallRules(t *testing.T) {
	f := newFWFixture(t)
	c := f.controller(nil)
	f.sync(c)
	f.wantRules(fwNodeRules)
	for _, id := range f.nodes {
		if m, _ := f.sim.Machine(id); m.Tags[clusterTag] != "test" || m.Tags["role"] != "k8s" || m.FirewallEnabled {
			t.Errorf("node machine %s has tags %v, firewall %v: want k8s-cluster=test added, firewall left off", id, m.Tags, m.FirewallEnabled)
		}
	}
	if m, _ := f.sim.Machine(f.other); len(m.Tags) != 0 {
		t.Errorf("a machine that is no node got tags %v", m.Tags)
	}

	writes := f.sim.Writes()
	f.sync(c)
	if got := f.sim.Writes() - writes; got != 0 {
		t.Errorf("a sync with nothing changed made %d writes", got)
	}

	ours := f.ours()
	fw := c.api.Network().Firewall()
	if err := fw.DeleteRule(f.ctx, &network.DeleteRuleInput{ID: ours[fwKeyNodesTCP].ID}); err != nil {
		t.Fatal(err)
	}
	if _, err := fw.UpdateRule(f.ctx, &network.UpdateRuleInput{ID: ours[fwKeyNodesUDP].ID, Enabled: true,
		Rule: fwAmong + "udp PORT 53", Description: ours[fwKeyNodesUDP].Description}); err != nil {
		t.Fatal(err)
	}
	if _, err := fw.DisableRule(f.ctx, &network.DisableRuleInput{ID: ours[fwKeyNodesICMP].ID}); err != nil {
		t.Fatal(err)
	}
	writes = f.sim.Writes()
	f.sync(c)
	if got := f.sim.Writes() - writes; got != 3 {
		t.Errorf("putting three rules back made %d writes, want 3", got)
	}
	f.wantRules(fwNodeRules)
	after := f.ours()
	for _, key := range []string{fwKeyNodesUDP, fwKeyNodesICMP} {
		if after[key].ID != ours[key].ID {
			t.Errorf("rule %s was replaced (%s, was %s), not put back in place", key, after[key].ID, ours[key].ID)
		}
	}
}

// TestFirewallRuleWrittenBack: a rule FWAPI wrote back in its own way
// (case, quotes, spaces) is the same rule: no write.
func TestFirewallRuleWrittenBack(t *testing.T) {
	f := newFWFixture(t)
	for key, text := range map[string]string{
		fwKeyNodesTCP:  `from tag k8s-cluster = test to tag "k8s-cluster"="test" allow TCP port ALL`,
		fwKeyNodesUDP:  fwNodeRules[fwKeyNodesUDP],
		fwKeyNodesICMP: fwNodeRules[fwKeyNodesICMP],
	} {
		if _, err := f.sim.AddFirewallRule(tritonsim.FirewallRule{Rule: text, Enabled: true, Description: clusterRulePrefix("test") + key}); err != nil {
			t.Fatal(err)
		}
	}
	c := f.controller(nil)
	f.sync(c) // tags the nodes
	writes := f.sim.Writes()
	f.sync(c)
	if got := f.sim.Writes() - writes; got != 0 {
		t.Errorf("%d writes for rules that are ours already", got)
	}
}

// TestFirewallSettings: the public NodePort rule is kept while its setting
// is on and deleted when it is turned off; the nodes' firewalls are turned
// on when asked, and only theirs.
func TestFirewallSettings(t *testing.T) {
	f := newFWFixture(t)
	f.sync(f.controller(map[string]string{"TRITON_FIREWALL_NODEPORTS_PUBLIC": "true", "TRITON_FIREWALL_NODEPORT_RANGE": "30000-30100"}))
	withPorts := maps.Clone(fwNodeRules)
	withPorts[fwKeyNodePorts] = `FROM any TO tag "k8s-cluster" = "test" ALLOW tcp PORTS 30000 - 30100`
	f.wantRules(withPorts)
	kept := f.ours()

	c := f.controller(map[string]string{"TRITON_FIREWALL_ENABLE_NODES": "true"})
	f.sync(c)
	f.wantRules(fwNodeRules)
	writes := f.sim.Writes()
	f.sync(c)
	if got := f.sim.Writes() - writes; got != 0 {
		t.Errorf("a sync with nothing changed made %d writes", got)
	}
	for key, r := range f.ours() {
		if kept[key].ID != r.ID {
			t.Errorf("rule %s was rewritten when another setting changed", key)
		}
	}
	for _, id := range f.nodes {
		if m, _ := f.sim.Machine(id); !m.FirewallEnabled {
			t.Errorf("node machine %s: firewall off, want on", id)
		}
	}
	if m, _ := f.sim.Machine(f.other); m.FirewallEnabled {
		t.Error("a machine that is no node got its firewall on")
	}
}

// TestFirewallCloudAPIErrors: a list that fails (a 500, a truncated
// answer) is an error before any write: no rule deleted although the
// settings changed, no firewall turned on without the rules.
func TestFirewallCloudAPIErrors(t *testing.T) {
	f := newFWFixture(t)
	f.sync(f.controller(map[string]string{"TRITON_FIREWALL_NODEPORTS_PUBLIC": "true"}))
	before := f.sim.FirewallRules()

	c := f.controller(map[string]string{"TRITON_FIREWALL_ENABLE_NODES": "true"})
	for _, fault := range []tritonsim.Fault{
		{Op: "GET /{account}/fwrules", Status: http.StatusInternalServerError},
		{Op: "GET /{account}/fwrules", Truncate: true},
		{Op: "GET /{account}/fwrules", Status: http.StatusOK, Body: []map[string]any{{"rule": "FROM any TO all vms ALLOW tcp PORT 22"}}},
	} {
		remove := f.sim.Inject(fault)
		writes := f.sim.Writes()
		if err := c.sync(f.ctx); err == nil {
			t.Errorf("sync with %+v: no error", fault)
		}
		remove()
		if got := f.sim.Writes() - writes; got != 0 {
			t.Errorf("sync with %+v made %d writes", fault, got)
		}
		if got := f.sim.FirewallRules(); !slices.Equal(got, before) {
			t.Errorf("sync with %+v changed the rules to %v", fault, got)
		}
		for _, id := range f.nodes {
			if m, _ := f.sim.Machine(id); m.FirewallEnabled {
				t.Errorf("sync with %+v turned machine %s's firewall on", fault, id)
			}
		}
	}
	f.sync(c)
	f.wantRules(fwNodeRules)
}

// TestFirewallControllerRun: the controller, run as the framework runs it,
// keeps the rules from its start, tags a node that joins without waiting
// for the resync, ends when its context does, and fails (for the
// framework to restart it) when CloudAPI does.
func TestFirewallControllerRun(t *testing.T) {
	f := newFWFixture(t)
	p, env := f.provider(map[string]string{"TRITON_FIREWALL_RESYNC": "1h", "TRITON_FIREWALL_ENABLE_NODES": "true"})
	i := slices.IndexFunc(p.Controllers(), func(c framework.Controller) bool { return c.Name == FirewallControllerName })
	if i < 0 {
		t.Fatalf("no controller %s", FirewallControllerName)
	}
	ctrl := p.Controllers()[i]
	ctx, cancel := context.WithCancel(f.ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- ctrl.Run(ctx, env) }()
	// The first sync: the nodes there at the start.
	err := wait.PollUntilContextTimeout(f.ctx, 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		for _, id := range f.nodes {
			if m, _ := f.sim.Machine(id); !m.FirewallEnabled {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		t.Fatal("the first sync did not turn the nodes' firewalls on")
	}

	joined := f.sim.AddMachine(tritonsim.Machine{Name: "node-c"}).ID
	f.addNode("node-c", joined)
	err = wait.PollUntilContextTimeout(f.ctx, 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		m, _ := f.sim.Machine(joined)
		return m.Tags[clusterTag] == "test" && m.FirewallEnabled, nil
	})
	if err != nil {
		t.Fatal("the node that joined was not tagged and its firewall turned on")
	}
	f.wantRules(fwNodeRules)

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run stopped with %v, want nil", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not end with its context")
	}

	f.sim.Fail(http.StatusInternalServerError, "GET /{account}/fwrules")
	errc := make(chan error, 1)
	env.Informers = informers.NewSharedInformerFactory(f.kube, 0)
	go func() { errc <- ctrl.Run(f.ctx, env) }()
	select {
	case err := <-errc:
		if err == nil || !strings.Contains(err.Error(), "listing firewall rules") {
			t.Errorf("Run with CloudAPI failing: %v, want the list's error", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not fail with CloudAPI failing")
	}
}

// TestFirewallConfig: the settings are read from the environment and a bad
// one fails start-up, named by its variable.
func TestFirewallConfig(t *testing.T) {
	f := newFWFixture(t)
	p, _ := f.provider(map[string]string{"TRITON_FIREWALL_NODEPORTS_PUBLIC": "yes", "TRITON_FIREWALL_NODEPORT_RANGE": "31000-31999",
		"TRITON_FIREWALL_ENABLE_NODES": "true", "TRITON_FIREWALL_RESYNC": "90s"})
	if want := (FirewallSettings{NodePortsPublic: true, NodePortRange: "31000-31999", EnableNodes: true, Resync: 90 * time.Second}); p.cfg.Firewall != want {
		t.Errorf("settings %+v, want %+v", p.cfg.Firewall, want)
	}
	p, _ = f.provider(nil)
	if want := (FirewallSettings{NodePortRange: defaultNodePortRange, Resync: defaultFirewallResync}); p.cfg.Firewall != want {
		t.Errorf("default settings %+v, want %+v", p.cfg.Firewall, want)
	}

	env := f.sim.Env(f.sim.URL())
	env["TRITON_FIREWALL_NODEPORT_RANGE"] = "30000-"
	_, err := framework.NewCloud(f.ctx, New(), &framework.Env{ClusterName: "test",
		LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }})
	if err == nil || !strings.Contains(err.Error(), "TRITON_FIREWALL_NODEPORT_RANGE") {
		t.Errorf("a bad range: %v, want an error naming TRITON_FIREWALL_NODEPORT_RANGE", err)
	}
}

// TestFirewallWithoutLoadBalancers: with TRITON_LB_MODE=none, on an
// account without CNS, the controller keeps the rules and tags the nodes'
// machines as it does with load balancers, and turns their firewalls on
// when asked.
func TestFirewallWithoutLoadBalancers(t *testing.T) {
	f := newFWFixture(t)
	f.sim.SetCNSEnabled(false)
	c := f.controller(map[string]string{"TRITON_LB_MODE": modeNone, "TRITON_FIREWALL_ENABLE_NODES": "true"})
	f.sync(c)
	f.wantRules(fwNodeRules)
	for _, id := range f.nodes {
		if m, _ := f.sim.Machine(id); m.Tags[clusterTag] != "test" || !m.FirewallEnabled {
			t.Errorf("node machine %s has tags %v, firewall %v: want k8s-cluster=test and the firewall on", id, m.Tags, m.FirewallEnabled)
		}
	}
}

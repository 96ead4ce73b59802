package e2e

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"maps"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/framework/config"
	"github.com/ccmkit/ccmkit/framework/frameworktest"
	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
	"github.com/ccmkit/ccmkit/internal/cluster"
)

// guardNodes is how many Nodes testWrongAccountKeepsNodes runs: one VM
// deleted, then half the rest at once.
const guardNodes = 5

// testWrongAccountKeepsNodes: the running CCM's credential is swapped for
// a valid one of another account of the cloud (the simulator's
// OtherAccount), the way users change it: the mounted Secret's files are
// rewritten, and the CCM restarted where a setting it needs is not one it
// re-reads (an account name, a project URL). Every Node is NotReady: the
// node lifecycle controller asks about each of them every second, and
// deletes none through refusedSweeps sweeps; each Node gets the guard's
// Warning, the CCM's Lease the component's, and
// cloudprovider_node_deletion_withheld counts them. The right credential
// back, the guard ends at its first check. Then one VM deleted takes
// exactly its Node, and half the rest deleted at once exactly theirs.
func testWrongAccountKeepsNodes(t *testing.T, p cluster.Provider) {
	c := startCluster(t, p, cluster.SimOptions{})
	other := c.Sim.OtherAccount()
	secret := newMountedSecret(t, p, c)
	port := freePort(t)
	args := []string{"--secure-port=" + strconv.Itoa(port)}
	ccm, err := c.StartCCMWithOnlyEnv("ccm", secret.env, args...)
	if err != nil {
		t.Fatal(err)
	}
	ids := addNodes(t, c, "node", guardNodes)
	names := slices.Sorted(maps.Keys(ids))
	for _, name := range names {
		if err := c.Kubelet(name).NotReady(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	token := testCCMMetrics(t, c.Kube, port)

	// Another account's credential: no Node goes.
	before := map[string]int{}
	for _, name := range names {
		before[name] = refusedChecks(ccm.Log(), name)
	}
	if secret.swap(other) {
		ccm = restartCCM(t, c, ccm, secret.env, args)
		before = map[string]int{}
	}
	eventually(t, 60*time.Second, fmt.Sprintf("%d lifecycle sweeps withheld for every Node", refusedSweeps), func(ctx context.Context) (bool, error) {
		nodes, err := c.Kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		if len(nodes.Items) != guardNodes {
			t.Fatalf("with another account's credential, %d of %d Nodes are left", len(nodes.Items), guardNodes)
		}
		log := ccm.Log()
		for _, name := range names {
			if refusedChecks(log, name)-before[name] < refusedSweeps {
				return false, nil
			}
		}
		return true, nil
	})
	eventually(t, 30*time.Second, "a "+framework.ReasonDeletionWithheld+" Warning on every Node, "+framework.ReasonCloudCannotSeeCluster+" on the CCM's Lease", func(ctx context.Context) (bool, error) {
		warned, err := warnedNodes(ctx, c)
		if err != nil {
			return false, err
		}
		lease, err := c.Kube.CoreV1().Events(metav1.NamespaceSystem).List(ctx, metav1.ListOptions{FieldSelector: "reason=" + framework.ReasonCloudCannotSeeCluster})
		if err != nil {
			return false, err
		}
		if len(warned) != guardNodes || len(lease.Items) == 0 {
			return false, fmt.Errorf("warned %v, %d Lease events", warned, len(lease.Items))
		}
		return true, nil
	})
	if got := scrapeGauge(t, port, token, `cloudprovider_node_deletion_withheld{provider="`+p.Name+`"}`); got != guardNodes {
		t.Errorf("cloudprovider_node_deletion_withheld = %v, want %d", got, guardNodes)
	}

	// The right credential back: normal at the guard's next check.
	if secret.restore() {
		restartCCM(t, c, ccm, secret.env, args)
	} else {
		eventually(t, 30*time.Second, "the guard's episode over", func(ctx context.Context) (bool, error) {
			ev, err := c.Kube.CoreV1().Events(metav1.NamespaceSystem).List(ctx, metav1.ListOptions{FieldSelector: "reason=" + framework.ReasonCloudSeesCluster})
			return err == nil && len(ev.Items) > 0, err
		})
	}
	eventually(t, 30*time.Second, "cloudprovider_node_deletion_withheld back to 0", func(context.Context) (bool, error) {
		return scrapeGauge(t, port, token, `cloudprovider_node_deletion_withheld{provider="`+p.Name+`"}`) == 0, nil
	})

	// A real scale-down goes through: one VM, then half the rest at once.
	for _, batch := range [][]string{{"node-1"}, {"node-0", "node-3"}} {
		for _, name := range batch {
			c.Sim.DeleteInstance(ids[name])
		}
		eventually(t, 60*time.Second, fmt.Sprintf("Nodes %v deleted", batch), func(ctx context.Context) (bool, error) {
			for _, name := range batch {
				if _, err := c.Kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
					return false, err
				}
			}
			return true, nil
		})
	}
	nodes, err := c.Kube.CoreV1().Nodes().List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, n := range nodes.Items {
		left = append(left, n.Name)
	}
	slices.Sort(left)
	if !slices.Equal(left, []string{"node-2", "node-4"}) {
		t.Errorf("Nodes left after the scale-down: %v, want [node-2 node-4]", left)
	}
}

// warnedNodes are the Nodes with a NodeDeletionWithheld Warning.
func warnedNodes(ctx context.Context, c *cluster.Cluster) ([]string, error) {
	ev, err := c.Kube.CoreV1().Events(metav1.NamespaceAll).List(ctx, metav1.ListOptions{FieldSelector: "reason=" + framework.ReasonDeletionWithheld})
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ev.Items {
		if e.Type == corev1.EventTypeWarning && e.InvolvedObject.Kind == "Node" && !slices.Contains(out, e.InvolvedObject.Name) {
			out = append(out, e.InvolvedObject.Name)
		}
	}
	slices.Sort(out)
	return out, nil
}

// restartCCM stops ccm and starts the CCM again with env, as a Deployment
// rolls its Pod when the Secret it reads its settings from changes.
func restartCCM(t *testing.T, c *cluster.Cluster, ccm *cluster.CCM, env map[string]string, args []string) *cluster.CCM {
	t.Helper()
	ccm.Stop()
	next, err := c.StartCCMWithOnlyEnv("ccm-restarted", env, args...)
	if err != nil {
		t.Fatal(err)
	}
	return next
}

// mountedSecret is the CCM's settings as a Secret mounted in its Pod
// gives them: each credential (a config.Secret setting) in a file its
// X_FILE variable names, the cloud config in the --cloud-config file.
type mountedSecret struct {
	t         *testing.T
	c         *cluster.Cluster
	dir       string
	env       map[string]string // the CCM's environment
	original  map[string]string // the simulator's settings
	secret    map[string]bool   // settings read from a file
	origConf  string
	cloudConf string // path, "" for none
}

func newMountedSecret(t *testing.T, p cluster.Provider, c *cluster.Cluster) *mountedSecret {
	t.Helper()
	m := &mountedSecret{t: t, c: c, dir: t.TempDir(), env: map[string]string{}, original: c.Sim.Env(),
		secret: map[string]bool{}, origConf: c.Sim.CloudConfig(), cloudConf: c.CloudConfigPath()}
	if cfg, ok := p.New().(framework.Configurable); ok {
		fields, err := config.Fields(cfg.Config())
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range fields {
			if f.Type == "secret" && f.Env != "" {
				m.secret[f.Env] = true
			}
		}
	}
	m.set(m.original)
	return m
}

// set puts settings in the CCM's environment, each credential in its
// file. It reports whether a setting the CCM reads once changed.
func (m *mountedSecret) set(settings map[string]string) (restart bool) {
	for k, v := range settings {
		if !m.secret[k] {
			restart = restart || m.env[k] != v
			m.env[k] = v
			continue
		}
		path := filepath.Join(m.dir, k)
		frameworktest.WriteAtomically(m.t, path, v)
		m.env[k+"_FILE"] = path
	}
	return restart
}

// swap changes the settings to creds; it reports whether the CCM must be
// restarted to read them.
func (m *mountedSecret) swap(creds simkit.Credentials) (restart bool) {
	restart = m.set(creds.Env)
	if creds.CloudConfig != "" {
		frameworktest.WriteAtomically(m.t, m.cloudConf, creds.CloudConfig)
		restart = true // the cloud config is read at start-up
	}
	return restart
}

// restore puts the simulator's own settings back.
func (m *mountedSecret) restore() (restart bool) {
	restart = m.set(m.original)
	if m.cloudConf != "" {
		frameworktest.WriteAtomically(m.t, m.cloudConf, m.origConf)
		restart = true
	}
	return restart
}

// scrapeGauge reads one sample of the CCM's /metrics; -1 when absent.
func scrapeGauge(t *testing.T, port int, token, sample string) float64 {
	t.Helper()
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, // the CCM's self-signed serving cert
	}}
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, fmt.Sprintf("https://127.0.0.1:%d/metrics", port), nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := client.Do(req)
	if err != nil {
		return -1
	}
	defer func() { _ = resp.Body.Close() }()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), sample+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err == nil {
				return f
			}
		}
	}
	return -1
}

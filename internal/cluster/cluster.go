package cluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/ccmkit/ccmkit/framework/frameworktest/kubetest"
)

// Options configure a local cluster with a control plane of its own.
type Options struct {
	Provider Provider
	// Root is the module root (manifests, sources); "" finds it from the
	// working directory.
	Root string
	// BinDir holds kube-apiserver and etcd, and receives the CCM binary;
	// "" means <root>/bin.
	BinDir string
	// WorkDir receives logs and kubeconfigs; "" means a new temp dir.
	WorkDir string
	// Sim configures the simulated cloud.
	Sim SimOptions
	// BuildTags are Go build tags for the CCM binary (go build -tags): a
	// deliberately broken build, to show that a check can fail.
	BuildTags []string
	// CCMBinary is a CCM binary built beforehand; "" builds the
	// provider's from Root (see PlaneOptions.CCMBinary).
	CCMBinary string
}

// AttachOptions configure a Cluster on a shared Plane.
type AttachOptions struct {
	// WorkDir receives the CCMs' logs and the cloud config; "" means a
	// new temp dir.
	WorkDir string
	// Sim configures the simulated cloud.
	Sim SimOptions
	// Namespace is where the scenario keeps its Services; it is created
	// if need be. "" means a new namespace of the plane's own
	// (e2e-<n>).
	Namespace string
	// StartSim starts the simulated cloud; nil means the provider's
	// StartSim. A scenario that needs the simulator's own type at hand
	// starts it itself and wraps it with AsSim.
	StartSim func(SimOptions) (Sim, error)
}

// Cluster is a control plane, a simulated cloud and the CCMs running
// against them: one scenario's view of a Plane.
type Cluster struct {
	Provider     Provider
	ControlPlane *kubetest.ControlPlane
	Sim          Sim
	Kube         kubernetes.Interface
	WorkDir      string
	// Namespace is where the scenario keeps its Services (and anything
	// else namespaced it makes).
	Namespace string

	plane *Plane
	// ownsPlane: Stop stops the plane too (Start), rather than resetting
	// it for the next scenario (Attach).
	ownsPlane bool
	ccmBinary string
	// cloudConfig is the path of the --cloud-config file, "" for none.
	cloudConfig string

	mu       sync.Mutex
	stopped  bool
	ccms     []*CCM
	kubelets map[string]*kubetest.Kubelet
	nodes    int
}

// Start builds the provider's CCM binary, starts a control plane of the
// cluster's own with the provider's RBAC, and starts the simulated cloud.
// The cluster keeps its Services in namespace default; Stop stops it all.
func Start(ctx context.Context, o Options) (*Cluster, error) {
	p, err := StartPlane(ctx, PlaneOptions{Provider: o.Provider, Root: o.Root, BinDir: o.BinDir, BuildTags: o.BuildTags, CCMBinary: o.CCMBinary})
	if err != nil {
		return nil, err
	}
	c, err := p.attach(ctx, AttachOptions{WorkDir: o.WorkDir, Sim: o.Sim, Namespace: metav1.NamespaceDefault}, true)
	if err != nil {
		p.Stop()
		return nil, err
	}
	return c, nil
}

// Attach waits until no other Cluster uses the plane, then starts the
// simulated cloud and returns a Cluster on the plane. Its Stop stops what
// the scenario started and resets the plane for the next one.
func (p *Plane) Attach(ctx context.Context, o AttachOptions) (*Cluster, error) {
	return p.attach(ctx, o, false)
}

func (p *Plane) attach(ctx context.Context, o AttachOptions, owned bool) (_ *Cluster, err error) {
	if err := p.acquire(ctx); err != nil {
		return nil, err
	}
	c := &Cluster{
		Provider: p.Provider, ControlPlane: p.ControlPlane, Kube: p.Kube, WorkDir: o.WorkDir, Namespace: o.Namespace,
		plane: p, ownsPlane: owned, ccmBinary: p.ccmBinary, kubelets: map[string]*kubetest.Kubelet{},
	}
	defer func() {
		if err != nil {
			c.Stop()
		}
	}()
	if c.WorkDir == "" {
		if c.WorkDir, err = os.MkdirTemp("", "ccmkit-"+p.Provider.Name+"-"); err != nil {
			return nil, err
		}
	}
	if c.Namespace == "" {
		p.mu.Lock()
		c.Namespace = fmt.Sprintf("e2e-%d", p.attached)
		p.mu.Unlock()
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: c.Namespace}}
	if _, err = c.Kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("creating namespace %s: %w", c.Namespace, err)
	}
	startSim := o.StartSim
	if startSim == nil {
		startSim = p.Provider.StartSim
	}
	if c.Sim, err = startSim(o.Sim); err != nil {
		return nil, fmt.Errorf("starting the %s simulator: %w", p.Provider.Name, err)
	}
	if conf := c.Sim.CloudConfig(); conf != "" {
		c.cloudConfig = filepath.Join(c.WorkDir, "cloud.conf")
		if err = os.WriteFile(c.cloudConfig, []byte(conf), 0o600); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// CCMArgs are the flags every CCM of a local cluster gets: short periods so
// scenarios converge in seconds. Later flags in StartCCM's extra args win.
func (c *Cluster) CCMArgs(port int) []string {
	args := []string{
		"--kubeconfig=" + c.ControlPlane.CCMKubeconfig(),
		// Outside a Pod the secure port's delegated authn/authz needs these.
		"--authentication-kubeconfig=" + c.ControlPlane.CCMKubeconfig(),
		"--authorization-kubeconfig=" + c.ControlPlane.CCMKubeconfig(),
		"--cloud-provider=" + c.Provider.Name,
		"--cluster-name=ccmkit",
		"--leader-elect=false",
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(port),
		"--node-monitor-period=1s",
		"--node-status-update-frequency=5s",
		"--instance-cache-ttl=2s",
		"--configure-cloud-routes=false",
		"-v=2",
	}
	if c.cloudConfig != "" {
		args = append(args, "--cloud-config="+c.cloudConfig)
	}
	return args
}

// CloudConfigPath is the path of the --cloud-config file CCMArgs passes,
// "" for a cloud configured by its environment: a scenario rewrites it as
// the kubelet updates a mounted Secret.
func (c *Cluster) CloudConfigPath() string { return c.cloudConfig }

// StartCCM runs the provider's CCM binary against the cluster. name labels
// its log file.
func (c *Cluster) StartCCM(name string, extraArgs ...string) (*CCM, error) {
	return c.StartCCMWithEnv(name, nil, extraArgs...)
}

// AddNode creates a VM called name in the simulated cloud and registers its
// Node as a kubelet with --cloud-provider=external would, with the next
// pod CIDR. It returns the VM's cloud ID.
func (c *Cluster) AddNode(ctx context.Context, name string, heartbeat time.Duration) (string, error) {
	id := c.Sim.AddInstance(name)
	c.mu.Lock()
	n := c.nodes
	c.nodes++
	c.mu.Unlock()
	k, err := kubetest.StartKubelet(ctx, c.Kube, kubetest.NodeSpec{
		Name:    name,
		PodCIDR: podCIDR(n),
	}, heartbeat)
	if err != nil {
		return "", fmt.Errorf("registering node %s: %w", name, err)
	}
	c.mu.Lock()
	c.kubelets[name] = k
	c.mu.Unlock()
	return id, nil
}

// AddNodes adds n VMs named <prefix>-<i> and registers their Nodes, many
// at a time, through an unthrottled client. It returns the VMs' cloud IDs
// in order.
func (c *Cluster) AddNodes(ctx context.Context, prefix string, n int, heartbeat time.Duration) ([]string, error) {
	cfg := c.ControlPlane.RESTConfig()
	cfg.QPS, cfg.Burst = -1, 0 // no client-side rate limit
	fast, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	ids := make([]string, n)
	specs := make([]kubetest.NodeSpec, n)
	c.mu.Lock()
	for i := range n {
		specs[i] = kubetest.NodeSpec{Name: fmt.Sprintf("%s-%d", prefix, i), PodCIDR: podCIDR(c.nodes)}
		c.nodes++
	}
	c.mu.Unlock()
	for i, spec := range specs {
		ids[i] = c.Sim.AddInstance(spec.Name)
	}
	kubelets, err := kubetest.RegisterNodes(ctx, fast, specs, heartbeat)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	for _, k := range kubelets {
		c.kubelets[k.Name()] = k
	}
	c.mu.Unlock()
	return ids, nil
}

// podCIDR is the n-th node's /24 in 10.244.0.0/16 (wrapping past 256, so
// large benchmarks reuse ranges; routes are off there).
func podCIDR(n int) string { return fmt.Sprintf("10.244.%d.0/24", n%256) }

// Kubelet returns the kubelet stand-in of a node added with AddNode.
func (c *Cluster) Kubelet(name string) *kubetest.Kubelet {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.kubelets[name]
}

// Stop stops the CCMs, kubelets and simulator, then the control plane
// (a cluster of Start) or resets the shared plane for the next scenario
// (a cluster of Attach). It is safe to call more than once.
func (c *Cluster) Stop() {
	c.mu.Lock()
	if c.stopped {
		c.mu.Unlock()
		return
	}
	c.stopped = true
	ccms, kubelets := c.ccms, c.kubelets
	c.ccms, c.kubelets = nil, map[string]*kubetest.Kubelet{}
	c.mu.Unlock()
	for _, ccm := range ccms {
		ccm.Stop()
	}
	for _, k := range kubelets {
		k.Stop()
	}
	if c.Sim != nil {
		c.Sim.Close()
	}
	if c.ownsPlane {
		c.plane.Stop()
		return
	}
	c.plane.release()
}

// BuildCCM builds the provider's CCM binary into binDir, with the Go build
// tags given, and returns its path; a build with tags gets its own file
// (<name>-<tag>-<tag>). The Go build cache makes a rebuild of unchanged
// code quick.
//
// The binary is built as the images ship it (hack/images) and `make
// build` builds it: static (CGO_ENABLED=0), -trimpath and stripped (-s
// -w, which also links faster). The tests then run what ships, and these
// builds, the image test's, the cmd tests' (internal/cmdtest) and
// bin/kube-apiserver's share one set of compiled packages in the build
// cache.
func BuildCCM(ctx context.Context, root, binDir string, p Provider, tags ...string) (string, error) {
	return BuildCommand(ctx, root, binDir, p.Command, tags...)
}

// BuildCommand is BuildCCM for any of the module's commands, e.g.
// "./cmd/digitalocean-csi-driver".
func BuildCommand(ctx context.Context, root, binDir, command string, tags ...string) (string, error) {
	out := filepath.Join(binDir, strings.Join(append([]string{filepath.Base(command)}, tags...), "-"))
	args := []string{"build", "-trimpath", "-ldflags=-s -w", "-o", out}
	if len(tags) > 0 {
		args = append(args, "-tags", strings.Join(tags, ","))
	}
	cmd := exec.CommandContext(ctx, "go", append(args, command)...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building %s: %w\n%s", command, err, b)
	}
	return out, nil
}

// ModuleRoot finds the ccmkit module root from the working directory.
func ModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			if _, err := os.Stat(filepath.Join(dir, "framework")); err == nil {
				return dir, nil
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("cannot find the ccmkit module root above the working directory")
		}
		dir = parent
	}
}

// FreePort returns a free TCP port on loopback.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

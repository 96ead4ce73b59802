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

	"k8s.io/client-go/kubernetes"

	"github.com/ccmkit/ccmkit/framework/frameworktest/kubetest"
)

// Options configure a local cluster.
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
}

// Cluster is a control plane, a simulated cloud and the CCMs running
// against them.
type Cluster struct {
	Provider     Provider
	ControlPlane *kubetest.ControlPlane
	Sim          Sim
	Kube         kubernetes.Interface
	WorkDir      string

	ccmBinary string
	// cloudConfig is the path of the --cloud-config file, "" for none.
	cloudConfig string

	mu       sync.Mutex
	ccms     []*CCM
	kubelets map[string]*kubetest.Kubelet
	nodes    int
}

// Start builds the provider's CCM binary, starts the control plane with the
// provider's RBAC, and starts the simulated cloud.
func Start(ctx context.Context, o Options) (_ *Cluster, err error) {
	if o.Root == "" {
		if o.Root, err = ModuleRoot(); err != nil {
			return nil, err
		}
	}
	if o.BinDir == "" {
		o.BinDir = filepath.Join(o.Root, "bin")
	}
	if o.WorkDir == "" {
		if o.WorkDir, err = os.MkdirTemp("", "ccmkit-"+o.Provider.Name+"-"); err != nil {
			return nil, err
		}
	}
	c := &Cluster{Provider: o.Provider, WorkDir: o.WorkDir, kubelets: map[string]*kubetest.Kubelet{}}
	defer func() {
		if err != nil {
			c.Stop()
		}
	}()
	if c.ccmBinary, err = BuildCCM(ctx, o.Root, o.BinDir, o.Provider, o.BuildTags...); err != nil {
		return nil, err
	}
	var rbac []string
	for _, m := range o.Provider.RBAC {
		rbac = append(rbac, filepath.Join(o.Root, m))
	}
	c.ControlPlane, err = kubetest.NewControlPlane(kubetest.ControlPlaneOptions{BinDir: o.BinDir, RBACManifests: rbac})
	if err != nil {
		return nil, err
	}
	if err = c.ControlPlane.Start(ctx); err != nil {
		return nil, fmt.Errorf("starting the control plane: %w", err)
	}
	c.Kube = c.ControlPlane.AdminClient()
	if c.Sim, err = o.Provider.StartSim(o.Sim); err != nil {
		return nil, fmt.Errorf("starting the %s simulator: %w", o.Provider.Name, err)
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

// Stop stops the CCMs, kubelets, simulator and control plane.
func (c *Cluster) Stop() {
	c.mu.Lock()
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
	if c.ControlPlane != nil {
		_ = c.ControlPlane.Stop()
	}
}

// BuildCCM builds the provider's CCM binary into binDir, with the Go build
// tags given, and returns its path; a build with tags gets its own file
// (<name>-<tag>-<tag>). The Go build cache makes a rebuild of unchanged
// code quick.
//
// The binary is built as the images ship it (hack/images): static
// (CGO_ENABLED=0) and -trimpath. The tests then run what ships, and these
// builds, the image test's and bin/kube-apiserver's share one set of
// compiled packages in the build cache.
func BuildCCM(ctx context.Context, root, binDir string, p Provider, tags ...string) (string, error) {
	out := filepath.Join(binDir, strings.Join(append([]string{filepath.Base(p.Command)}, tags...), "-"))
	args := []string{"build", "-trimpath", "-o", out}
	if len(tags) > 0 {
		args = append(args, "-tags", strings.Join(tags, ","))
	}
	cmd := exec.CommandContext(ctx, "go", append(args, p.Command)...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building %s: %w\n%s", p.Command, err, b)
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

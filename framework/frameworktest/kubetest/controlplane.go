package kubetest

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// DefaultCCMUser is the user the CCM kubeconfig authenticates as: the name
// the API server gives the kube-system/cloud-controller-manager
// ServiceAccount, so RBAC bindings to that ServiceAccount apply to it.
const DefaultCCMUser = "system:serviceaccount:kube-system:cloud-controller-manager"

const serviceAccountUserPrefix = "system:serviceaccount:"

// ControlPlaneOptions configures a local control plane. The zero value is
// usable when the binaries are in the default place.
type ControlPlaneOptions struct {
	// BinDir holds kube-apiserver and etcd; see ControlPlaneBinDir for the
	// default.
	BinDir string
	// RBACManifests are YAML files (ServiceAccounts, ClusterRoles, Roles and
	// their bindings) applied with the admin client before the CCM
	// kubeconfig is made.
	RBACManifests []string
	// CCMUser is the user name in the CCM kubeconfig; DefaultCCMUser if "".
	CCMUser string
	// CCMGroups are the CCM user's groups. Default: a ServiceAccount's
	// groups (system:serviceaccounts, system:serviceaccounts:<namespace>)
	// when CCMUser is a ServiceAccount user name, none otherwise. The API
	// server adds system:authenticated itself.
	CCMGroups []string
	// APIServerArgs are extra kube-apiserver flags, "--name=value"; a flag
	// given here replaces envtest's default for it.
	APIServerArgs []string
	// LogDir receives kube-apiserver.log and etcd.log. Default: a directory
	// in the control plane's temporary work directory.
	LogDir string
	// StartTimeout bounds the start of each of etcd and kube-apiserver;
	// default 60s.
	StartTimeout time.Duration
}

// ControlPlane is a real etcd and kube-apiserver on free loopback ports,
// with RBAC authorization and client-certificate users. Make one with
// NewControlPlane and Start it, or with StartControlPlane in a test.
type ControlPlane struct {
	opts    ControlPlaneOptions
	binDir  string
	workDir string
	logDir  string
	logs    []*os.File
	plane   *envtest.ControlPlane

	admin, ccm               *rest.Config
	adminClient              kubernetes.Interface
	adminKubeconfig, ccmKcfg string
	startupTime              time.Duration
	stopOnce                 sync.Once
	stopErr                  error
	keepWorkDir              bool
}

// NewControlPlane checks the options and finds the binaries; it starts
// nothing.
func NewControlPlane(o ControlPlaneOptions) (*ControlPlane, error) {
	binDir, err := ControlPlaneBinDir(o.BinDir)
	if err != nil {
		return nil, err
	}
	if o.CCMUser == "" {
		o.CCMUser = DefaultCCMUser
	}
	if o.CCMGroups == nil {
		o.CCMGroups = serviceAccountGroups(o.CCMUser)
	}
	o.StartTimeout = o.startTimeout()
	for _, a := range o.APIServerArgs {
		if _, _, err := splitFlag(a); err != nil {
			return nil, err
		}
	}
	for _, m := range o.RBACManifests {
		if _, err := os.Stat(m); err != nil {
			return nil, fmt.Errorf("RBAC manifest: %w", err)
		}
	}
	return &ControlPlane{opts: o, binDir: binDir}, nil
}

func (o ControlPlaneOptions) startTimeout() time.Duration {
	if o.StartTimeout == 0 {
		return 60 * time.Second
	}
	return o.StartTimeout
}

// serviceAccountGroups returns the groups the API server gives a
// ServiceAccount token's user, or nil when user is not a ServiceAccount.
func serviceAccountGroups(user string) []string {
	nsAndName, ok := strings.CutPrefix(user, serviceAccountUserPrefix)
	if !ok {
		return nil
	}
	ns, _, ok := strings.Cut(nsAndName, ":")
	if !ok || ns == "" {
		return nil
	}
	return []string{"system:serviceaccounts", "system:serviceaccounts:" + ns}
}

func splitFlag(arg string) (name, value string, err error) {
	name, value, ok := strings.Cut(strings.TrimPrefix(arg, "--"), "=")
	if !ok || !strings.HasPrefix(arg, "--") || name == "" {
		return "", "", fmt.Errorf("kube-apiserver argument %q: want --name=value", arg)
	}
	return name, value, nil
}

// Start runs etcd and kube-apiserver, waits until the API server is
// healthy, makes sure the system namespaces (default, kube-system,
// kube-public, kube-node-lease) exist, applies the RBAC manifests and
// writes the admin and CCM kubeconfigs. On error, whatever was started is
// stopped again and the work directory is kept for its logs.
func (c *ControlPlane) Start(ctx context.Context) (err error) {
	logger := klog.FromContext(ctx)
	begin := time.Now()
	if c.workDir, err = os.MkdirTemp("", "ccmkit-controlplane-"); err != nil {
		return fmt.Errorf("creating the work directory: %w", err)
	}
	defer func() {
		if err != nil {
			c.keepWorkDir = true // the logs explain the failure
			_ = c.Stop()
		}
	}()
	if err := c.startProcesses(ctx); err != nil {
		return err
	}
	if err := c.setUp(ctx); err != nil {
		return err
	}
	c.startupTime = time.Since(begin)
	logger.V(1).Info("Control plane started", "url", c.admin.Host, "duration", c.startupTime, "workDir", c.workDir)
	return nil
}

// startAttempts is how often Start tries etcd and kube-apiserver, each time
// on fresh ports: a free port found before start can be taken meanwhile.
const startAttempts = 3

func (c *ControlPlane) startProcesses(ctx context.Context) error {
	c.logDir = c.opts.LogDir
	if c.logDir == "" {
		c.logDir = filepath.Join(c.workDir, "logs")
	}
	if err := os.MkdirAll(c.logDir, 0o755); err != nil {
		return fmt.Errorf("creating the log directory: %w", err)
	}
	etcdLog, err := c.openLog(EtcdBinary)
	if err != nil {
		return err
	}
	apiLog, err := c.openLog(KubeAPIServerBinary)
	if err != nil {
		return err
	}
	args, err := c.apiServerArgs()
	if err != nil {
		return err
	}
	for attempt := 1; ; attempt++ {
		plane := c.newPlane(args, etcdLog, apiLog)
		err = plane.Start()
		if err == nil {
			c.plane = plane
			break
		}
		if attempt == startAttempts || ctx.Err() != nil {
			return fmt.Errorf("starting etcd and kube-apiserver (logs in %s): %w", c.logDir, err)
		}
		klog.FromContext(ctx).Info("Control plane did not start, retrying", "attempt", attempt, "err", err)
	}
	admin, err := c.plane.AddUser(envtest.User{Name: "ccmkit-admin", Groups: []string{"system:masters"}},
		&rest.Config{QPS: 1000, Burst: 2000, UserAgent: "ccmkit-kubetest"})
	if err != nil {
		return fmt.Errorf("provisioning the admin user: %w", err)
	}
	c.admin = admin.Config()
	return nil
}

// newPlane describes one start attempt: etcd and kube-apiserver on fresh
// ports and in fresh data and certificate directories.
func (c *ControlPlane) newPlane(args map[string]string, etcdLog, apiLog *os.File) *envtest.ControlPlane {
	api := &envtest.APIServer{
		Path:         filepath.Join(c.binDir, KubeAPIServerBinary),
		Out:          apiLog,
		Err:          apiLog,
		StartTimeout: c.opts.StartTimeout,
		StopTimeout:  stopTimeout,
	}
	for name, value := range args {
		api.Configure().Set(name, value)
	}
	return &envtest.ControlPlane{
		APIServer: api,
		Etcd: &envtest.Etcd{
			Path:         filepath.Join(c.binDir, EtcdBinary),
			Out:          etcdLog,
			Err:          etcdLog,
			StartTimeout: c.opts.StartTimeout,
			StopTimeout:  stopTimeout,
		},
		// envtest provisions a kubectl for its legacy default user; nothing
		// here runs it.
		KubectlPath: filepath.Join(c.binDir, "kubectl"),
	}
}

// apiServerArgs are the flags added to envtest's defaults (secure serving
// on a free loopback port, RBAC, client-certificate authentication, service
// account issuer and keys): the request-header (front proxy) settings every
// kubeadm cluster has, which the CCM's delegated authentication reads from
// the extension-apiserver-authentication ConfigMap, then the caller's.
func (c *ControlPlane) apiServerArgs() (map[string]string, error) {
	caFile := filepath.Join(c.workDir, "front-proxy-ca.crt")
	if err := writeCACert(caFile, "front-proxy-ca"); err != nil {
		return nil, err
	}
	args := map[string]string{
		"requestheader-client-ca-file":       caFile,
		"requestheader-allowed-names":        "front-proxy-client",
		"requestheader-username-headers":     "X-Remote-User",
		"requestheader-group-headers":        "X-Remote-Group",
		"requestheader-extra-headers-prefix": "X-Remote-Extra-",
	}
	for _, a := range c.opts.APIServerArgs {
		name, value, _ := splitFlag(a)
		args[name] = value
	}
	return args, nil
}

// writeCACert writes a new self-signed CA certificate (its key is thrown
// away: nothing here signs with it).
func writeCACert(path, name string) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	ca, err := certutil.NewSelfSignedCACert(certutil.Config{CommonName: name}, key)
	if err != nil {
		return fmt.Errorf("creating the %s certificate: %w", name, err)
	}
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Raw}), 0o600)
}

func (c *ControlPlane) openLog(name string) (*os.File, error) {
	f, err := os.Create(filepath.Join(c.logDir, name+".log"))
	if err != nil {
		return nil, fmt.Errorf("creating the %s log: %w", name, err)
	}
	c.logs = append(c.logs, f)
	return f, nil
}

// setUp prepares what a CCM expects of a cluster and writes kubeconfigs.
func (c *ControlPlane) setUp(ctx context.Context) error {
	var err error
	if c.adminClient, err = kubernetes.NewForConfig(c.admin); err != nil {
		return fmt.Errorf("admin client: %w", err)
	}
	// The API server's system-namespaces controller makes these soon after
	// start; create them now so callers never race it.
	for _, ns := range []string{metav1.NamespaceDefault, metav1.NamespaceSystem, metav1.NamespacePublic, corev1.NamespaceNodeLease} {
		_, err := c.adminClient.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating namespace %s: %w", ns, err)
		}
	}
	if err := ApplyManifests(ctx, c.adminClient, c.opts.RBACManifests...); err != nil {
		return fmt.Errorf("applying RBAC manifests: %w", err)
	}
	c.adminKubeconfig = filepath.Join(c.workDir, "admin.kubeconfig")
	if err := writeKubeconfig(c.adminKubeconfig, c.admin, "admin"); err != nil {
		return err
	}
	c.ccmKcfg = filepath.Join(c.workDir, "ccm.kubeconfig")
	c.ccm, err = c.AddUser(c.ccmKcfg, c.opts.CCMUser, c.opts.CCMGroups...)
	return err
}

// AddUser provisions a client certificate for user in groups, writes a
// kubeconfig for it to path (unless path is "") and returns its REST
// config. The API server adds system:authenticated to the groups.
func (c *ControlPlane) AddUser(path, user string, groups ...string) (*rest.Config, error) {
	u, err := c.plane.AddUser(envtest.User{Name: user, Groups: groups}, &rest.Config{QPS: -1, UserAgent: "ccmkit-kubetest"})
	if err != nil {
		return nil, fmt.Errorf("provisioning user %s: %w", user, err)
	}
	cfg := u.Config()
	if path != "" {
		if err := writeKubeconfig(path, cfg, user); err != nil {
			return nil, err
		}
	}
	return cfg, nil
}

// stopTimeout is how long etcd and kube-apiserver get to exit on SIGTERM
// before SIGKILL.
const stopTimeout = 10 * time.Second

// Stop stops kube-apiserver and etcd (SIGTERM to each process group, SIGKILL
// after 10s) and removes the work directory unless KeepWorkDir was called
// or Start failed. It is safe to call more than once.
func (c *ControlPlane) Stop() error {
	c.stopOnce.Do(func() {
		var errs []error
		if c.plane != nil {
			if err := c.plane.Stop(); err != nil {
				errs = append(errs, fmt.Errorf("stopping the control plane: %w", err))
			}
		}
		for _, f := range c.logs {
			errs = append(errs, f.Close())
		}
		if c.workDir != "" && !c.keepWorkDir {
			errs = append(errs, os.RemoveAll(c.workDir))
		}
		c.stopErr = errors.Join(errs...)
	})
	return c.stopErr
}

// KeepWorkDir makes Stop leave the work directory (kubeconfigs, logs) in
// place, e.g. for a demo's KEEP=1 mode or after a failure.
func (c *ControlPlane) KeepWorkDir() { c.keepWorkDir = true }

// WorkDir is the temporary directory with the kubeconfigs and, unless
// ControlPlaneOptions.LogDir says otherwise, the logs.
func (c *ControlPlane) WorkDir() string { return c.workDir }

// LogDir holds kube-apiserver.log and etcd.log.
func (c *ControlPlane) LogDir() string { return c.logDir }

// StartupTime is how long Start took.
func (c *ControlPlane) StartupTime() time.Duration { return c.startupTime }

// AdminKubeconfig is the path of a kubeconfig for a system:masters user.
func (c *ControlPlane) AdminKubeconfig() string { return c.adminKubeconfig }

// CCMKubeconfig is the path of a kubeconfig for the CCM user, which has only
// the permissions the RBAC manifests grant.
func (c *ControlPlane) CCMKubeconfig() string { return c.ccmKcfg }

// RESTConfig is the admin user's REST config (a copy).
func (c *ControlPlane) RESTConfig() *rest.Config { return rest.CopyConfig(c.admin) }

// CCMRESTConfig is the CCM user's REST config (a copy), for running a CCM
// in-process.
func (c *ControlPlane) CCMRESTConfig() *rest.Config { return rest.CopyConfig(c.ccm) }

// AdminClient is a clientset for the admin user.
func (c *ControlPlane) AdminClient() kubernetes.Interface { return c.adminClient }

// WriteKubeconfig copies the admin kubeconfig to path, for a person or
// kubectl to use while the control plane runs.
func (c *ControlPlane) WriteKubeconfig(path string) error {
	return writeKubeconfig(path, c.admin, "admin")
}

package csi

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	"k8s.io/component-base/metrics"
	"k8s.io/klog/v2"
	"k8s.io/mount-utils"
	"k8s.io/utils/exec"
)

// Mode is which CSI services a driver process serves.
type Mode string

// The modes: the controller Deployment serves Identity and Controller,
// the node DaemonSet Identity and Node; "all" serves the three (tests, a
// single-node cluster).
const (
	ModeController Mode = "controller"
	ModeNode       Mode = "node"
	ModeAll        Mode = "all"
)

func (m Mode) controller() bool { return m == ModeController || m == ModeAll }
func (m Mode) node() bool       { return m == ModeNode || m == ModeAll }

// ParseMode returns the Mode named s.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case ModeController, ModeNode, ModeAll:
		return m, nil
	}
	return "", fmt.Errorf("mode %q: must be %s, %s or %s", s, ModeController, ModeNode, ModeAll)
}

// DefaultByIDDir is where a real host's udev links block devices by ID.
const DefaultByIDDir = "/dev/disk/by-id"

// DefaultDeviceWait is how long NodeStageVolume and NodePublishVolume
// wait for an attached volume's device to appear before they answer
// Unavailable (the kubelet retries).
const DefaultDeviceWait = 10 * time.Second

// Options configure Serve.
type Options struct {
	// Endpoint is the gRPC endpoint: unix:///path/csi.sock, unix:path or
	// a plain path.
	Endpoint string
	// Mode is the services served; "" is ModeAll.
	Mode Mode
	// Provider is the cloud.
	Provider Provider
	// ByIDDir is the directory the provider's DevicePath finds devices
	// under; "" is DefaultByIDDir. Tests point it at a directory of
	// links to loop devices.
	ByIDDir string
	// DeviceWait bounds the wait for a device to appear (udev); 0 is
	// DefaultDeviceWait.
	DeviceWait time.Duration
	// Mounter formats, mounts and resizes on the node; nil is the host's
	// (mount(8), mkfs, blkid, resize2fs, xfs_growfs).
	Mounter *mount.SafeFormatAndMount
	// Logger logs requests (see the logging interceptor); the zero
	// Logger is klog's.
	Logger klog.Logger
	// Registry receives the driver's metrics; nil is legacyregistry.
	Registry metrics.KubeRegistry
	// MetricsAddress, when not "", serves /metrics and /healthz there.
	MetricsAddress string
	// Version is what GetPluginInfo answers; "" is Version().
	Version string
}

func (o *Options) defaults() error {
	if o.Provider == nil {
		return errors.New("no provider")
	}
	_, attacher := o.Provider.(Attacher)
	_, shared := o.Provider.(SharedFilesystem)
	if attacher == shared {
		return fmt.Errorf("provider %s must be either a csi.Attacher (block volumes) or a csi.SharedFilesystem", o.Provider.Name())
	}
	if o.Mode == "" {
		o.Mode = ModeAll
	}
	if _, err := ParseMode(string(o.Mode)); err != nil {
		return err
	}
	if o.ByIDDir == "" {
		o.ByIDDir = DefaultByIDDir
	}
	if o.DeviceWait == 0 {
		o.DeviceWait = DefaultDeviceWait
	}
	if o.Mounter == nil {
		o.Mounter = mount.NewSafeFormatAndMount(mount.New(""), exec.New())
	}
	if o.Logger.GetSink() == nil {
		o.Logger = klog.Background()
	}
	if o.Version == "" {
		o.Version = Version()
	}
	return nil
}

// Serve serves the CSI services of opts.Mode for opts.Provider on
// opts.Endpoint until ctx is done, then stops gracefully.
func Serve(ctx context.Context, opts Options) error {
	if err := opts.defaults(); err != nil {
		return err
	}
	logger := opts.Logger.WithValues("driver", opts.Provider.Name(), "mode", opts.Mode)
	if in, ok := opts.Provider.(Initializer); ok {
		if err := in.Init(ctx, &Env{Mode: opts.Mode, Logger: logger, Version: opts.Version}); err != nil {
			return fmt.Errorf("initializing %s: %w", opts.Provider.Name(), err)
		}
	}
	d := newDriver(opts)
	lis, err := listen(opts.Endpoint)
	if err != nil {
		return err
	}
	srv := grpc.NewServer(grpc.ChainUnaryInterceptor(d.interceptor(logger)))
	d.register(srv)

	errc := make(chan error, 2)
	var httpSrv *http.Server
	if opts.MetricsAddress != "" {
		httpSrv = d.httpServer(ctx, opts.MetricsAddress)
		hl, err := net.Listen("tcp", opts.MetricsAddress)
		if err != nil {
			_ = lis.Close()
			return fmt.Errorf("metrics address: %w", err)
		}
		go func() {
			if err := httpSrv.Serve(hl); err != nil && !errors.Is(err, http.ErrServerClosed) {
				errc <- fmt.Errorf("metrics: %w", err)
			}
		}()
	}
	logger.Info("Serving CSI", "endpoint", opts.Endpoint, "version", opts.Version)
	go func() { errc <- srv.Serve(lis) }()

	select {
	case err = <-errc:
		srv.Stop()
	case <-ctx.Done():
		logger.Info("Stopping CSI")
		stopGracefully(srv, 10*time.Second)
	}
	if httpSrv != nil {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		_ = httpSrv.Shutdown(sctx)
		cancel()
	}
	return err
}

func stopGracefully(srv *grpc.Server, timeout time.Duration) {
	done := make(chan struct{})
	go func() { srv.GracefulStop(); close(done) }()
	select {
	case <-done:
	case <-time.After(timeout):
		srv.Stop()
	}
}

// listen listens on a unix socket endpoint, replacing a stale socket a
// previous process left.
func listen(endpoint string) (net.Listener, error) {
	path, err := SocketPath(endpoint)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return nil, fmt.Errorf("endpoint %s: %w", endpoint, err)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("endpoint %s: removing the old socket: %w", endpoint, err)
	}
	lis, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("endpoint %s: %w", endpoint, err)
	}
	return lis, nil
}

// SocketPath returns the path of a unix socket endpoint: unix:///a/b,
// unix:/a/b, unix://a/b (relative) or a plain path.
func SocketPath(endpoint string) (string, error) {
	path := endpoint
	if scheme, rest, ok := strings.Cut(endpoint, ":"); ok && !strings.Contains(scheme, "/") {
		if scheme != "unix" {
			return "", fmt.Errorf("endpoint %s: only unix sockets are served", endpoint)
		}
		path = strings.TrimPrefix(rest, "//")
	}
	if path == "" {
		return "", fmt.Errorf("endpoint %q: no socket path", endpoint)
	}
	return path, nil
}

// driver holds the three services.
type driver struct {
	opts     Options
	name     string
	limits   Limits
	key      string
	locks    *inflight
	resizer  *mount.ResizeFs
	recorder *recorder
}

func newDriver(opts Options) *driver {
	return &driver{
		opts:     opts,
		name:     opts.Provider.Name(),
		limits:   opts.Provider.Limits(),
		key:      opts.Provider.TopologyKey(),
		locks:    newInflight(),
		resizer:  mount.NewResizeFs(opts.Mounter.Exec),
		recorder: newRecorder(opts.Registry, opts.Provider.Name()),
	}
}

func (d *driver) register(srv *grpc.Server) {
	csipb.RegisterIdentityServer(srv, &identity{d: d})
	if d.opts.Mode.controller() {
		csipb.RegisterControllerServer(srv, &controller{d: d})
	}
	if d.opts.Mode.node() {
		csipb.RegisterNodeServer(srv, &node{d: d})
	}
}

func (d *driver) expander() (Expander, bool) { e, ok := d.opts.Provider.(Expander); return e, ok }
func (d *driver) snapshotter() (Snapshotter, bool) {
	s, ok := d.opts.Provider.(Snapshotter)
	return s, ok
}
func (d *driver) lister() (Lister, bool) { l, ok := d.opts.Provider.(Lister); return l, ok }

// attacher is the provider's block side; nil for a SharedFilesystem.
func (d *driver) attacher() Attacher { a, _ := d.opts.Provider.(Attacher); return a }

// sharedFS reports whether the provider's volumes are shared filesystems.
func (d *driver) sharedFS() bool { return d.attacher() == nil }

// shared is the provider's shared filesystem side; nil for an Attacher.
func (d *driver) shared() SharedFilesystem { s, _ := d.opts.Provider.(SharedFilesystem); return s }

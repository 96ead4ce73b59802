package csitest

import (
	"bytes"
	"cmp"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"k8s.io/component-base/metrics"
	"k8s.io/klog/v2/ktesting"

	"github.com/ccmkit/ccmkit/framework/csi"
)

// Driver is a framework/csi driver a test started, and clients of it.
type Driver struct {
	Endpoint   string
	Conn       *grpc.ClientConn
	Identity   csipb.IdentityClient
	Controller csipb.ControllerClient
	Node       csipb.NodeClient
}

// StartDriver serves opts until the test ends: by default in all modes,
// on a socket in a temporary directory, logging through t.Log at
// verbosity (0: 2, the failed calls), its metrics on a registry of its
// own, waiting 2s for devices.
func StartDriver(t testing.TB, opts csi.Options, verbosity int) *Driver {
	t.Helper()
	if opts.Endpoint == "" {
		// A short path: a unix socket's is at most 107 bytes.
		dir, err := os.MkdirTemp("", "csi") //nolint:usetesting // t.TempDir() holds the test name: too long for a socket
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = os.RemoveAll(dir) })
		opts.Endpoint = "unix://" + filepath.Join(dir, "csi.sock")
	}
	if opts.Logger.GetSink() == nil {
		opts.Logger = ktesting.NewLogger(t, ktesting.NewConfig(ktesting.Verbosity(cmp.Or(verbosity, 2))))
	}
	if opts.Registry == nil {
		opts.Registry = metrics.NewKubeRegistry()
	}
	opts.DeviceWait = cmp.Or(opts.DeviceWait, 2*time.Second)
	sock, err := csi.SocketPath(opts.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		// t.Context() ends right before the cleanups, which wait for
		// the driver to stop.
		done <- csi.Serve(t.Context(), opts)
	}()
	t.Cleanup(func() {
		if err := <-done; err != nil {
			t.Errorf("serving the driver: %v", err)
		}
	})
	for start := time.Now(); ; time.Sleep(10 * time.Millisecond) {
		if c, err := net.Dial("unix", sock); err == nil {
			_ = c.Close()
			break
		}
		select {
		case err := <-done:
			done <- err
			t.Fatalf("serving the driver: %v", err)
		default:
		}
		if time.Since(start) > 30*time.Second {
			t.Fatalf("the driver did not listen on %s", sock)
		}
	}
	conn, err := grpc.NewClient(opts.Endpoint, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return &Driver{Endpoint: opts.Endpoint, Conn: conn,
		Identity: csipb.NewIdentityClient(conn), Controller: csipb.NewControllerClient(conn), Node: csipb.NewNodeClient(conn)}
}

// LogBuffer collects what a driver logs, from any goroutine, for a test
// to search (a credential must never be in it).
type LogBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *LogBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// String is everything logged so far.
func (l *LogBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

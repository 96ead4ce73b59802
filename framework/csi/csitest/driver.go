package csitest

import (
	"bytes"
	"cmp"
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
		opts.Endpoint = shortEndpoint(t)
	}
	if opts.Logger.GetSink() == nil {
		opts.Logger = ktesting.NewLogger(t, ktesting.NewConfig(ktesting.Verbosity(cmp.Or(verbosity, 2))))
	}
	if opts.Registry == nil {
		opts.Registry = metrics.NewKubeRegistry()
	}
	opts.DeviceWait = cmp.Or(opts.DeviceWait, 2*time.Second)
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
	if stopped, err := waitListening(opts.Endpoint, done, 30*time.Second); stopped {
		done <- err
		t.Fatalf("serving the driver: %v", err)
	} else if err != nil {
		t.Fatal(err)
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

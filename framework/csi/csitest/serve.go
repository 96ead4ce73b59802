package csitest

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/component-base/metrics"

	"github.com/ccmkit/ccmkit/framework/csi"
)

// ServeUntilListening serves p in mode (csi.Serve: Init, then listen) at
// -v=10 and returns Init's error, or nil once the driver listens, and
// stops it: a provider's start-up checks (settings, credentials). It
// fails t if any of secrets is in the log or the error, or if the driver
// neither fails nor listens within 30s.
func ServeUntilListening(t testing.TB, p csi.Provider, mode csi.Mode, secrets ...string) error {
	t.Helper()
	logs := &LogBuffer{}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	endpoint := shortEndpoint(t)
	done := make(chan error, 1)
	go func() {
		done <- csi.Serve(ctx, csi.Options{Endpoint: endpoint, Mode: mode, Provider: p, Logger: logs.Logger(),
			Registry: metrics.NewKubeRegistry()})
	}()
	stopped, err := waitListening(endpoint, done, 30*time.Second)
	if !stopped {
		if err != nil {
			t.Error(err)
		}
		cancel()
		err = <-done
	}
	for _, s := range secrets {
		if strings.Contains(logs.String(), s) || (err != nil && strings.Contains(err.Error(), s)) {
			t.Errorf("the credential %q is in the log or the error: %v", s, err)
		}
	}
	return err
}

// waitListening waits until the driver serving on endpoint accepts
// connections, or it stops (stopped, with the error done gave), or
// timeout passes (an error).
func waitListening(endpoint string, done <-chan error, timeout time.Duration) (stopped bool, err error) {
	sock, err := csi.SocketPath(endpoint)
	if err != nil {
		return false, err
	}
	for start := time.Now(); ; time.Sleep(10 * time.Millisecond) {
		if c, err := net.Dial("unix", sock); err == nil {
			_ = c.Close()
			return false, nil
		}
		select {
		case err := <-done:
			return true, err
		default:
		}
		if time.Since(start) > timeout {
			return false, fmt.Errorf("the driver did not listen on %s in %s", sock, timeout)
		}
	}
}

// shortEndpoint is a unix:// endpoint in a new directory removed when the
// test ends: a short path, as a unix socket's is at most 107 bytes.
func shortEndpoint(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "csi") //nolint:usetesting // t.TempDir() holds the test name: too long for a socket
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return "unix://" + filepath.Join(dir, "csi.sock")
}

// WithFlags is p with the command-line args parsed as its binary parses
// them (csi.NewCommand with p's CommandOptions).
func WithFlags[P interface {
	csi.Provider
	CommandOptions() []csi.Option
}](t testing.TB, p P, args ...string) P {
	t.Helper()
	if err := csi.NewCommand(p, p.CommandOptions()...).ParseFlags(args); err != nil {
		t.Fatal(err)
	}
	return p
}

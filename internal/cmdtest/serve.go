package cmdtest

import (
	"bytes"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// ServedCSI is a CSI driver binary ServeCSI started, and a client
// connection to its socket.
type ServedCSI struct {
	Conn *grpc.ClientConn

	cmd  *exec.Cmd
	out  bytes.Buffer  // stdout and stderr, read once the process exited
	done chan struct{} // closed when it has
	code int           // its exit status, -1 for a signal
	stop sync.Once
}

// ServeCSI starts bin with args and --endpoint on a new unix socket, in
// an environment as Run's, and returns once the driver accepts
// connections there, with a gRPC connection to it. It fails t if the
// driver exits first or does not listen within 30s. The driver is
// stopped (Stop) when the test ends, if not before.
func ServeCSI(t *testing.T, bin string, env []string, args ...string) *ServedCSI {
	t.Helper()
	endpoint := csiEndpoint(t)
	s := &ServedCSI{done: make(chan struct{})}
	s.cmd = exec.Command(bin, append(args, "--endpoint="+endpoint)...)
	s.cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}, env...)
	s.cmd.Stdout, s.cmd.Stderr = &s.out, &s.out
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		err := s.cmd.Wait()
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			s.code = exit.ExitCode()
		} else if err != nil {
			s.code = -1
		}
		close(s.done)
	}()
	t.Cleanup(func() { s.Stop() })

	sock := endpoint[len("unix://"):]
	for start := time.Now(); ; time.Sleep(10 * time.Millisecond) {
		if c, err := net.Dial("unix", sock); err == nil {
			_ = c.Close()
			break
		}
		select {
		case <-s.done:
			t.Fatalf("the driver exited with status %d before it listened:\n%s", s.code, s.out.String())
		default:
		}
		if time.Since(start) > 30*time.Second {
			out, _ := s.Stop()
			t.Fatalf("the driver did not listen on %s in 30s:\n%s", sock, out)
		}
	}
	conn, err := grpc.NewClient(endpoint, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	s.Conn = conn
	return s
}

// Stop sends the driver SIGTERM, as the kubelet stops a container, waits
// for it to exit (killing it after 10s) and returns its combined output
// and exit status; called again, it returns them again.
func (s *ServedCSI) Stop() (log string, exitCode int) {
	s.stop.Do(func() {
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.done:
		case <-time.After(10 * time.Second):
			_ = s.cmd.Process.Kill()
			<-s.done
		}
	})
	return s.out.String(), s.code
}

// csiEndpoint is a unix:// endpoint in a new directory removed when the
// test ends: a short path, as a unix socket's is at most 107 bytes.
func csiEndpoint(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "csi") //nolint:usetesting // t.TempDir() holds the test name: too long for a socket
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return "unix://" + filepath.Join(dir, "csi.sock")
}

package cluster

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"syscall"
	"time"
)

// CCM is a cloud-controller-manager binary running as a subprocess.
type CCM struct {
	Name    string
	LogPath string

	cmd  *exec.Cmd
	done chan struct{}
	err  error
}

// StartCCM runs binary with args and env (added to a minimal environment:
// nothing of the caller's leaks into the CCM), logging to logPath.
func StartCCM(binary, logPath string, env map[string]string, args ...string) (*CCM, error) {
	if err := os.MkdirAll(filepath.Dir(logPath), 0o755); err != nil {
		return nil, err
	}
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(binary, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + filepath.Dir(logPath)}
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		cmd.Env = append(cmd.Env, k+"="+env[k])
	}
	// Its own process group, so a test's cleanup never leaves it behind.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		_ = logFile.Close()
		return nil, fmt.Errorf("starting %s: %w", binary, err)
	}
	c := &CCM{Name: filepath.Base(logPath), LogPath: logPath, cmd: cmd, done: make(chan struct{})}
	go func() {
		c.err = cmd.Wait()
		_ = logFile.Close()
		close(c.done)
	}()
	return c, nil
}

// PID is the CCM's process ID.
func (c *CCM) PID() int { return c.cmd.Process.Pid }

// Kill ends the CCM at once (SIGKILL), as a crashed or evicted pod would.
func (c *CCM) Kill() { c.signal(syscall.SIGKILL) }

// Stop asks the CCM to exit (SIGTERM) and waits up to ten seconds before
// killing it.
func (c *CCM) Stop() {
	c.signal(syscall.SIGTERM)
	select {
	case <-c.done:
	case <-time.After(10 * time.Second):
		c.Kill()
	}
}

func (c *CCM) signal(sig syscall.Signal) {
	if c.Exited() {
		return
	}
	_ = syscall.Kill(-c.cmd.Process.Pid, sig)
	if sig == syscall.SIGKILL {
		<-c.done
	}
}

// Exited reports whether the process has ended.
func (c *CCM) Exited() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// Wait waits for the process to end and returns its exit error.
func (c *CCM) Wait(ctx context.Context) error {
	select {
	case <-c.done:
		var exit *exec.ExitError
		if errors.As(c.err, &exit) && exit.ExitCode() == -1 {
			return fmt.Errorf("%s was killed", c.Name)
		}
		return c.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Log returns what the CCM has logged so far.
func (c *CCM) Log() string {
	b, _ := os.ReadFile(c.LogPath)
	return string(b)
}

// StartCCMWithEnv is Cluster.StartCCM with env added to what the simulator
// gives the CCM (winning over it), e.g. a provider's optional settings.
func (c *Cluster) StartCCMWithEnv(name string, env map[string]string, extraArgs ...string) (*CCM, error) {
	all := map[string]string{}
	maps.Copy(all, c.Sim.Env())
	maps.Copy(all, env)
	return c.StartCCMWithOnlyEnv(name, all, extraArgs...)
}

// StartCCMWithOnlyEnv is Cluster.StartCCM with env instead of what the
// simulator gives the CCM: for a test that configures the CCM as a shipped
// manifest does, from a Secret.
func (c *Cluster) StartCCMWithOnlyEnv(name string, env map[string]string, extraArgs ...string) (*CCM, error) {
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	args := append(c.CCMArgs(port), extraArgs...)
	ccm, err := StartCCM(c.ccmBinary, filepath.Join(c.WorkDir, name+".log"), env, args...)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.ccms = append(c.ccms, ccm)
	c.mu.Unlock()
	return ccm, nil
}

// CCMBinary is the path of the provider's CCM binary, built by Start.
func (c *Cluster) CCMBinary() string { return c.ccmBinary }

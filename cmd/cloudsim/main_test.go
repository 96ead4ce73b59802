package main

import (
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/ccmkit/ccmkit/internal/cmdtest"
)

// TestBinary builds cloudsim and runs it as a script would: read the
// printed environment, use the cloud, stop it with SIGTERM.
func TestBinary(t *testing.T) {
	bin := cmdtest.Build(t)

	cmd := exec.CommandContext(t.Context(), bin, "--scenario="+exampleScenario)
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := false
	t.Cleanup(func() {
		if !exited {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})

	printed, err := readEnv(stdout)
	if err != nil {
		t.Fatalf("reading stdout: %v; stderr:\n%s", err, stderr)
	}
	env := parseEnv(t, printed)
	checkServesScenario(t, env)

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	exited = true
	if err != nil {
		t.Fatalf("after SIGTERM: %v, want exit status 0; stderr:\n%s", err, stderr)
	}
	if got := stderr.String(); !strings.Contains(got, "skeleton cloud simulator listening on "+env["CLOUDSIM_URL"]) {
		t.Errorf("stderr = %q, want the listening line", got)
	}
}

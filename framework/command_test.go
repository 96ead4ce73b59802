package framework_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"

	"k8s.io/component-base/cli"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/framework/frameworktest"
)

// TestMain lets a test re-run this binary as the fake provider's CCM, to
// check what only a whole process shows (exit codes, logging set-up).
func TestMain(m *testing.M) {
	if args := os.Getenv("CCMKIT_RUN_COMMAND"); args != "" {
		cmd := framework.NewCommand(frameworktest.NewFakeProvider(frameworktest.NewFakeCloud()), framework.WithVersion("v1.2.3-test"))
		cmd.SetArgs(strings.Fields(args))
		os.Exit(cli.Run(cmd))
	}
	os.Exit(m.Run())
}

func runCommand(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "CCMKIT_RUN_COMMAND="+strings.Join(args, " "))
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func TestCommandVersion(t *testing.T) {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "CCMKIT_RUN_COMMAND=--version")
	stdout, err := cmd.Output() // stdout only: -race builds log a line to stderr
	out := string(stdout)
	if err != nil {
		t.Fatalf("--version: %v\n%s", err, out)
	}
	if want := "fake-cloud-controller-manager v1.2.3-test\n"; out != want {
		t.Fatalf("--version printed %q, want %q", out, want)
	}
}

func TestCommandJSONLogging(t *testing.T) {
	// The kubeconfig does not exist, so the command stops right after
	// logging is set up and the flags are logged at -v=1.
	out, err := runCommand(t, "--logging-format=json", "-v=1", "--kubeconfig=/nonexistent/kubeconfig")
	if err == nil {
		t.Fatalf("command with a missing kubeconfig succeeded:\n%s", out)
	}
	var sawFlag bool
	for _, line := range strings.Split(out, "\n") {
		if !strings.HasPrefix(line, "{") {
			continue
		}
		var entry struct{ Msg string }
		if err := json.Unmarshal([]byte(line), &entry); err != nil {
			t.Fatalf("log line is not JSON: %q: %v", line, err)
		}
		sawFlag = sawFlag || strings.Contains(entry.Msg, "FLAG: --logging-format")
	}
	if !sawFlag {
		t.Fatalf("no JSON log entry for the flags at -v=1:\n%s", out)
	}
}

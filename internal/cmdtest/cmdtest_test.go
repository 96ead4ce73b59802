package cmdtest

import (
	"debug/buildinfo"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestMain(m *testing.M) { Main(m) }

// TestBuild checks that a command is built once per process, as
// internal/cluster.BuildCCM builds it, and that Run and RunSplit run it in
// a clean environment.
func TestBuild(t *testing.T) {
	t.Chdir("testdata/echo")
	bin := Build(t)
	before, err := os.Stat(bin)
	if err != nil {
		t.Fatal(err)
	}
	if again := Build(t); again != bin {
		t.Errorf("second Build: %s, want the first's %s", again, bin)
	}
	if after, err := os.Stat(bin); err != nil || !after.ModTime().Equal(before.ModTime()) {
		t.Errorf("second Build wrote the binary again (%v)", err)
	}

	info, err := buildinfo.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	if settings["CGO_ENABLED"] != "0" || settings["-trimpath"] != "true" {
		t.Errorf("built with CGO_ENABLED=%q -trimpath=%q, want 0 and true as BuildCCM", settings["CGO_ENABLED"], settings["-trimpath"])
	}

	stdout, stderr, code := RunSplit(t, bin, []string{"X=1"}, "a", "b")
	vars := strings.Fields(stdout)
	slices.Sort(vars)
	if diff := cmp.Diff([]string{"HOME", "PATH", "X"}, vars); diff != "" || stderr != "a b\n" || code != 3 {
		t.Errorf("RunSplit: exit status %d, stderr %q, environment (-want +got):\n%s", code, stderr, diff)
	}
	if out, code := Run(t, bin, nil, "c"); !strings.Contains(out, "PATH\n") || !strings.HasSuffix(out, "c\n") || code != 3 {
		t.Errorf("Run: exit status %d, output %q", code, out)
	}
}

type fakeCloud struct {
	env         map[string]string
	cloudConfig string
}

func (c fakeCloud) Env() map[string]string { return c.env }
func (c fakeCloud) CloudConfig() string    { return c.cloudConfig }
func (c fakeCloud) Writes() int            { return 0 }

func TestSettings(t *testing.T) {
	c := CCM{Cloud: fakeCloud{env: map[string]string{"B": "b", "A": "a", "C": "c"}}}
	env, args := c.settings(t, map[string]string{"A": "", "C": "changed", "D": "d"}, "")
	if diff := cmp.Diff([]string{"B=b", "C=changed", "D=d"}, env); diff != "" || args != nil {
		t.Errorf("settings: args %q, environment (-want +got):\n%s", args, diff)
	}
	if env, _ := c.settings(t, nil, ""); len(env) != 3 {
		t.Errorf("settings without changes: %q, want the cloud's 3 variables", env)
	}

	c = CCM{Cloud: fakeCloud{cloudConfig: "[Global]\n"}}
	env, args = c.settings(t, nil, "[Global]\nregion = r\n")
	if len(env) != 0 || len(args) != 1 || !strings.HasPrefix(args[0], "--cloud-config=") {
		t.Fatalf("settings: environment %q, args %q; want none and --cloud-config", env, args)
	}
	if b, err := os.ReadFile(strings.TrimPrefix(args[0], "--cloud-config=")); err != nil || string(b) != "[Global]\nregion = r\n" {
		t.Errorf("the --cloud-config file holds %q (%v)", b, err)
	}
}

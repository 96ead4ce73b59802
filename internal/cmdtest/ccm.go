package cmdtest

import (
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// CCM is one cloud's cloud-controller-manager binary, for CheckCCM: what
// its simulated cloud is, and how the binary must refuse bad settings.
type CCM struct {
	// Cloud is the simulated cloud the binary talks to. Its settings (Env,
	// CloudConfig) are the ones that work; Failures change them.
	Cloud Cloud
	// Secrets are credentials no output may hold, at any -v: the wrong
	// ones Failures use, and any the cloud's settings hold that
	// MakeSecret.Data does not list (one line of a key, say, as a log may
	// escape its line breaks).
	Secrets []string
	// Failures are settings that must stop the binary at start-up.
	Failures []Failure
	// MakeSecret is what the make-secret subcommand prints with the
	// cloud's settings; nil for a provider without it.
	MakeSecret *MakeSecret
}

// Cloud is what CheckCCM needs of a simulated cloud; every simulator's
// Cloud() (a simkit.Cloud) has it.
type Cloud interface {
	// Env is the environment that points a CCM at the cloud.
	Env() map[string]string
	// CloudConfig is the --cloud-config file that does, "" for none.
	CloudConfig() string
	// Writes counts the mutating requests the cloud has served.
	Writes() int
}

// Failure is one set of bad settings: the cloud's, changed.
type Failure struct {
	Name string
	// Env changes the cloud's environment: each variable is set to its
	// value here, or unset when that is "".
	Env map[string]string
	// CloudConfig is the --cloud-config file in place of the cloud's, ""
	// for none.
	CloudConfig string
	// Want are what the output must mention: the setting at fault.
	Want []string
	// Request is the operation ("account.get") of the request the cloud
	// refused, "" when nothing may reach the cloud. The output must then
	// log that request with its headers (at -v=10), so that the Secrets
	// check covers what a request logs.
	Request string
}

// MakeSecret is what the make-secret subcommand must print with the
// cloud's settings.
type MakeSecret struct {
	// Data are keys of the printed Secret and the credentials they must
	// hold; no other output may hold those values.
	Data map[string]string
	// Request is the operation of the request that checks the
	// credentials, which the log (stderr) must show at -v=10.
	Request string
}

// ccmFlags are the flags every ccmkit CCM takes: upstream's
// (k8s.io/cloud-provider/app), the JSON logging framework.NewCommand adds,
// and ccmkit's own (framework/options.go; docs/writing-a-provider.md,
// "The binary").
var ccmFlags = []string{
	"--kubeconfig", "--cloud-config", "--controllers", "--leader-elect", "--secure-port", "--logging-format",
	"--cloud-api-qps", "--cloud-api-burst", "--cloud-api-max-retries", "--cloud-api-timeout",
	"--cloud-init-timeout", "--instance-lookup-timeout",
	"--instance-cache-ttl", "--load-balancer-cache-ttl", "--load-balancer-wait",
}

// CheckCCM builds the command under test (see Build) and runs, one
// subtest each, the checks every cloud's binary must pass:
//
//   - --version prints "<binary name> <version>", and --help lists the
//     flags every ccmkit CCM takes;
//   - each of c.Failures stops the binary at start-up (-v=10) with exit
//     status 1 and output that mentions the Failure's Want, logs its
//     Request and holds no credential, and the cloud sees no write;
//   - with c.MakeSecret, make-secret -v=10 prints the Secret with its
//     Data to stdout, and to stderr the log of its Request and no
//     credential; each of c.Failures makes it exit 1 with nothing on
//     stdout and a message as the start-up's, and no write.
func CheckCCM(t *testing.T, c CCM) {
	t.Helper()
	bin := Build(t)
	secrets := slices.Clone(c.Secrets)
	if c.MakeSecret != nil {
		secrets = slices.AppendSeq(secrets, maps.Values(c.MakeSecret.Data))
	}

	t.Run("version", func(t *testing.T) { checkVersion(t, bin) })
	t.Run("help", func(t *testing.T) { checkHelp(t, bin, ccmFlags, nil) })

	kubeconfig := Kubeconfig(t)
	for _, f := range c.Failures {
		t.Run("startup/"+f.Name, func(t *testing.T) {
			defer checkNoWrite(t, c.Cloud.Writes, c.Cloud.Writes())
			env, args := c.settings(t, f.Env, f.CloudConfig)
			out, code := Run(t, bin, env, append(args, "--kubeconfig="+kubeconfig, "--secure-port=0", "-v=10")...)
			if code != 1 {
				t.Fatalf("exit status %d, want 1; output:\n%s", code, out)
			}
			checkLog(t, "output", out, f.Want, f.Request, secrets)
		})
	}
	if c.MakeSecret == nil {
		return
	}

	makeSecret := func(t *testing.T, changes map[string]string, cloudConfig string) (stdout, stderr string, code int) {
		t.Helper()
		env, args := c.settings(t, changes, cloudConfig)
		return RunSplit(t, bin, env, append([]string{"make-secret", "-v=10"}, args...)...)
	}
	t.Run("make-secret", func(t *testing.T) {
		defer checkNoWrite(t, c.Cloud.Writes, c.Cloud.Writes())
		stdout, stderr, code := makeSecret(t, nil, c.Cloud.CloudConfig())
		if code != 0 {
			t.Fatalf("exit status %d; stderr:\n%s", code, stderr)
		}
		var s corev1.Secret
		if err := yaml.UnmarshalStrict([]byte(stdout), &s); err != nil {
			t.Fatalf("stdout is not a Secret (%v):\n%s", err, stdout)
		}
		for key, want := range c.MakeSecret.Data {
			if got := string(s.Data[key]); got != want {
				t.Errorf("the Secret's %s is %q, want %q", key, got, want)
			}
		}
		checkLog(t, "stderr", stderr, nil, c.MakeSecret.Request, secrets)
	})
	for _, f := range c.Failures {
		t.Run("make-secret/"+f.Name, func(t *testing.T) {
			defer checkNoWrite(t, c.Cloud.Writes, c.Cloud.Writes())
			stdout, stderr, code := makeSecret(t, f.Env, f.CloudConfig)
			if code != 1 || stdout != "" {
				t.Fatalf("exit status %d, stdout %q; want 1 and nothing; stderr:\n%s", code, stdout, stderr)
			}
			checkLog(t, "stderr", stderr, f.Want, f.Request, secrets)
		})
	}
}

// settings returns the environment ("KEY=value" each, sorted) and the
// arguments of a run: the cloud's environment with changes (as
// Failure.Env), and --cloud-config for a cloudConfig file.
func (c CCM) settings(t *testing.T, changes map[string]string, cloudConfig string) (env, args []string) {
	t.Helper()
	return settings(t, c.Cloud.Env(), changes, cloudConfig)
}

// settings returns the environment ("KEY=value" each, sorted) and the
// arguments of a run: base with changes (as Failure.Env), and
// --cloud-config for a cloudConfig file.
func settings(t *testing.T, base, changes map[string]string, cloudConfig string) (env, args []string) {
	t.Helper()
	vars := maps.Clone(base)
	if vars == nil {
		vars = map[string]string{}
	}
	for k, v := range changes {
		if v == "" {
			delete(vars, k)
		} else {
			vars[k] = v
		}
	}
	for _, k := range slices.Sorted(maps.Keys(vars)) {
		env = append(env, k+"="+vars[k])
	}
	if cloudConfig != "" {
		args = append(args, "--cloud-config="+WriteFile(t, "cloud.conf", cloudConfig))
	}
	return env, args
}

// checkHelp fails t unless bin --help exits 0 and lists each of flags
// and mentions each of more.
func checkHelp(t *testing.T, bin string, flags, more []string) {
	t.Helper()
	out, code := Run(t, bin, nil, "--help")
	if code != 0 {
		t.Fatalf("--help: exit status %d:\n%s", code, out)
	}
	for _, flag := range flags {
		if !strings.Contains(out, flag+" ") {
			t.Errorf("--help lacks %s", flag)
		}
	}
	for _, m := range more {
		if !strings.Contains(out, m) {
			t.Errorf("--help does not mention %s", m)
		}
	}
}

// checkVersion fails t unless bin --version prints "<binary name>
// <version>" and exits 0.
func checkVersion(t *testing.T, bin string) {
	t.Helper()
	out, code := Run(t, bin, nil, "--version")
	if f := strings.Fields(out); code != 0 || len(f) != 2 || f[0] != filepath.Base(bin) {
		t.Errorf("--version: exit status %d, output %q; want 0 and %q", code, out, filepath.Base(bin)+" <version>")
	}
}

// checkLog fails t unless log (the output called what) mentions each of
// want and, for a request, the request's log line with its headers, and
// holds none of secrets.
func checkLog(t *testing.T, what, log string, want []string, request string, secrets []string) {
	t.Helper()
	if request != "" {
		want = append(slices.Clip(want), `"Cloud API request"`, `operation="`+request+`"`, "requestHeaders")
	}
	for _, w := range want {
		if !strings.Contains(log, w) {
			t.Errorf("%s does not mention %q:\n%s", what, w, log)
		}
	}
	for _, s := range secrets {
		if s != "" && strings.Contains(log, s) {
			t.Errorf("%s reveals the credential %q:\n%s", what, s, log)
		}
	}
}

// checkNoWrite fails t if the cloud has served a write (writes counts
// them: a Cloud's Writes) since it had served before; deferred, it checks
// a whole subtest.
func checkNoWrite(t *testing.T, writes func() int, before int) {
	t.Helper()
	if n := writes() - before; n != 0 {
		t.Errorf("the cloud served %d writes, want none", n)
	}
}

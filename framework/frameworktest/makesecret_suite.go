package frameworktest

import (
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2/ktesting"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// MakeSecretCase is one provider's make-secret, for RunMakeSecretSuite.
type MakeSecretCase struct {
	// NewProvider returns the provider the binary runs.
	NewProvider func() framework.Provider
	// Start starts a fresh simulated cloud and returns it with the
	// settings that reach it.
	Start func(t *testing.T) (simkit.Cloud, Settings)
	// Manifests is the provider's shipped manifests directory
	// (examples/manifests/<cloud>): make-secret must print the Secret its
	// secret.example.yaml ships, and the CCM must start with that Secret
	// mounted as its deployment.yaml mounts it.
	Manifests string
	// Outside are the environment variables the CCM takes from elsewhere
	// than the Secret and the manifests, copied from Start's settings:
	// the simulator's URL where the manifests leave the cloud's default.
	Outside []string

	// Credential is the setting that holds the credential: an environment
	// variable, or a key of the cloud.conf of a provider configured by
	// one.
	Credential string
	// Rejected is what make-secret's error says when the cloud refuses a
	// wrong credential; "" is Credential.
	Rejected string
	// WrongCredential and OfflineCredential replace the credential in the
	// runs that check a refused credential and --offline; "" is a made-up
	// string (a credential that must parse, such as a key, needs one).
	WrongCredential, OfflineCredential string
	// Required is a setting without which make-secret refuses, even
	// --offline; "" is Credential. RequiredError is what its error says;
	// "" is "<Required>: required".
	Required, RequiredError string

	// Check, when set, checks further the Secret make-secret printed for
	// Start's settings.
	Check func(t *testing.T, printed *corev1.Secret)
}

// Settings are a provider's settings: its environment, and the
// --cloud-config file of a provider configured by one.
type Settings struct {
	Env         map[string]string
	CloudConfig string
}

// RunMakeSecretSuite runs "<cloud>-cloud-controller-manager make-secret"
// against the provider's simulated cloud, as an operator would:
//
//   - Prints: with -v=10, it checks the credentials with the cloud (the log
//     shows its requests, and none of the printed Secret's credentials,
//     nor the cloud.conf's), prints the Secret the shipped manifests
//     read, and a CCM started with it mounted as the shipped Deployment
//     mounts it starts;
//   - Offline: --offline prints the credential given, and calls no API;
//   - WrongCredential: a credential the cloud refuses is an error that
//     says so, holds no part of it, and prints nothing;
//   - MissingSetting: without a required setting it fails naming it,
//     even --offline, and prints nothing.
func RunMakeSecretSuite(t *testing.T, c MakeSecretCase) {
	c.defaults()
	t.Run("Prints", func(t *testing.T) { testMakeSecretPrints(t, c) })
	t.Run("Offline", func(t *testing.T) { testMakeSecretOffline(t, c) })
	t.Run("WrongCredential", func(t *testing.T) { testMakeSecretWrong(t, c) })
	t.Run("MissingSetting", func(t *testing.T) { testMakeSecretMissing(t, c) })
}

func (c *MakeSecretCase) defaults() {
	if c.Rejected == "" {
		c.Rejected = c.Credential
	}
	if c.WrongCredential == "" {
		c.WrongCredential = "wrong-credential-5b7c"
	}
	if c.OfflineCredential == "" {
		c.OfflineCredential = "not-checked-0c1d"
	}
	if c.Required == "" {
		c.Required = c.Credential
	}
	if c.RequiredError == "" {
		c.RequiredError = c.Required + ": required"
	}
}

func testMakeSecretPrints(t *testing.T, c MakeSecretCase) {
	cloud, s := c.Start(t)
	out, log, err := c.run(t, s, "-v=10")
	if err != nil {
		t.Fatalf("make-secret: %v\n%s", err, log)
	}
	printed := c.printed(t, out, s)
	if len(cloud.Stats()) == 0 || !strings.Contains(log, "Cloud API request") {
		t.Errorf("no API request made or logged at -v=10, so the log proves nothing:\n%s", log)
	}
	secrets := credentials(t, c.NewProvider(), printed)
	if s.CloudConfig != "" {
		secrets = append(secrets, setting(t, s, c.Credential))
	}
	if len(secrets) == 0 {
		t.Errorf("the printed Secret holds no value of a secret setting to look for in the log: %v", printed.Data)
	}
	for _, secret := range secrets {
		if reveals(log, secret) {
			t.Errorf("the log holds a credential:\n%s", log)
		}
	}
	if c.Check != nil {
		c.Check(t, printed)
	}
	mounted := MountedSettings(t, c.Manifests, printed)
	for _, name := range c.Outside {
		mounted.Env[name] = s.Env[name]
	}
	target := &Target{Env: mounted.Env, CloudConfig: mounted.CloudConfig}
	_, ctx := ktesting.NewTestContext(t)
	if _, err := framework.NewCloud(ctx, c.NewProvider(), newEnv(t, target, fake.NewClientset(), record.NewFakeRecorder(100), variant{})); err != nil {
		t.Errorf("the CCM does not start with the printed Secret mounted as %s/deployment.yaml mounts it: %v", c.Manifests, err)
	}
}

func testMakeSecretOffline(t *testing.T, c MakeSecretCase) {
	cloud, s := c.Start(t)
	s = withSetting(t, s, c.Credential, c.OfflineCredential)
	before := cloud.Stats()
	out, log, err := c.run(t, s, "--offline")
	if err != nil {
		t.Fatalf("make-secret --offline: %v\n%s", err, log)
	}
	printed := c.printed(t, out, s)
	given := strings.TrimSpace(c.OfflineCredential)
	holds := false
	for _, v := range printed.Data {
		holds = holds || strings.TrimSpace(string(v)) == given
	}
	if s.CloudConfig == "" && !holds {
		t.Errorf("the printed Secret does not hold the credential given: %v", printed.Data)
	}
	if after := cloud.Stats(); !maps.Equal(before, after) {
		t.Errorf("--offline made API calls: %v, then %v", before, after)
	}
}

func testMakeSecretWrong(t *testing.T, c MakeSecretCase) {
	_, s := c.Start(t)
	out, log, err := c.run(t, withSetting(t, s, c.Credential, c.WrongCredential))
	t.Logf("make-secret with a wrong %s: %v", c.Credential, err)
	if err == nil || !strings.Contains(err.Error(), c.Rejected) {
		t.Errorf("error %v, want one saying the cloud refused %s", err, c.Rejected)
	}
	if out != "" {
		t.Errorf("printed a Secret:\n%s", out)
	}
	if err != nil && reveals(err.Error()+log, c.WrongCredential) {
		t.Errorf("the error or the log holds the credential: %v\n%s", err, log)
	}
}

func testMakeSecretMissing(t *testing.T, c MakeSecretCase) {
	_, s := c.Start(t)
	out, _, err := c.run(t, withoutSetting(t, s, c.Required), "--offline")
	if err == nil || !strings.Contains(err.Error(), c.RequiredError) || out != "" {
		t.Errorf("error %v, stdout %q; want an error saying %q and no output", err, out, c.RequiredError)
	}
}

// run runs make-secret args... with s as the whole configuration.
func (c MakeSecretCase) run(t *testing.T, s Settings, args ...string) (stdout, log string, err error) {
	t.Helper()
	SetConfigEnv(t, c.NewProvider(), s.Env)
	if s.CloudConfig != "" {
		path := filepath.Join(t.TempDir(), "cloud.conf")
		if err := os.WriteFile(path, []byte(s.CloudConfig), 0o600); err != nil {
			t.Fatal(err)
		}
		args = append([]string{"--cloud-config=" + path}, args...)
	}
	return RunMakeSecret(t, c.NewProvider(), args...)
}

// printed reads the Secret make-secret printed for s: the shipped one's,
// holding the cloud.conf given when s has one.
func (c MakeSecretCase) printed(t *testing.T, out string, s Settings) *corev1.Secret {
	t.Helper()
	printed := ReadSecret(t, []byte(out))
	MatchesShippedSecret(t, printed, filepath.Join(c.Manifests, "secret.example.yaml"))
	if s.CloudConfig == "" {
		return printed
	}
	for _, v := range printed.Data {
		if string(v) == s.CloudConfig {
			return printed
		}
	}
	t.Errorf("the printed Secret does not hold the cloud.conf given: %v", printed.Data)
	return printed
}

// credentials are the values printed holds under the keys of p's secret
// settings.
func credentials(t *testing.T, p framework.Provider, printed *corev1.Secret) []string {
	t.Helper()
	var out []string
	for _, f := range secretFields(t, p) {
		if v, ok := printed.Data[f.SecretKey]; ok && f.SecretKey != "" {
			out = append(out, string(v))
		}
	}
	return out
}

// reveals reports whether text holds secret or a line of it (a PEM key's
// lines of key bytes, say); lines shorter than 6 bytes and armour lines
// ("-----BEGIN ...") are not looked for.
func reveals(text, secret string) bool {
	for line := range strings.Lines(secret) {
		line = strings.TrimSpace(line)
		if len(line) >= 6 && !strings.HasPrefix(line, "-----") && strings.Contains(text, line) {
			return true
		}
	}
	return false
}

// iniLine matches the line of a cloud.conf key; the name goes in %s.
const iniLine = `(?m)^[ \t]*%s[ \t]*=.*$`

func iniKey(t *testing.T, s Settings, name string) *regexp.Regexp {
	t.Helper()
	re := regexp.MustCompile(strings.Replace(iniLine, "%s", regexp.QuoteMeta(name), 1))
	if !re.MatchString(s.CloudConfig) {
		t.Fatalf("the cloud.conf has no %s:\n%s", name, s.CloudConfig)
	}
	return re
}

// setting is the value of s's setting name: an environment variable, or
// a cloud.conf key when s has one.
func setting(t *testing.T, s Settings, name string) string {
	t.Helper()
	if s.CloudConfig == "" {
		return s.Env[name]
	}
	_, v, _ := strings.Cut(iniKey(t, s, name).FindString(s.CloudConfig), "=")
	return strings.Trim(strings.TrimSpace(v), `"`)
}

// withSetting is s with its setting name set to value.
func withSetting(t *testing.T, s Settings, name, value string) Settings {
	t.Helper()
	if s.CloudConfig == "" {
		s.Env = maps.Clone(s.Env)
		s.Env[name] = value
		return s
	}
	s.CloudConfig = iniKey(t, s, name).ReplaceAllLiteralString(s.CloudConfig, name+" = "+value)
	return s
}

// withoutSetting is s without its setting name.
func withoutSetting(t *testing.T, s Settings, name string) Settings {
	t.Helper()
	if s.CloudConfig == "" {
		s.Env = maps.Clone(s.Env)
		delete(s.Env, name)
		return s
	}
	s.CloudConfig = iniKey(t, s, name).ReplaceAllLiteralString(s.CloudConfig, "")
	return s
}

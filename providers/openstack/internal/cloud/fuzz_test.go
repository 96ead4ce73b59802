package cloud

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ccmkit/ccmkit/framework/frameworktest/fuzzkit"
)

// fuzzCloudConf is the shipped secret.example.yaml's cloud.conf, filled
// in; the provider's fuzz tests start from it too.
const fuzzCloudConf = "testdata/fuzz-cloud.conf"

// FuzzCloudConf loads a fuzzed cloud.conf (OCCM's INI) and a fuzzed
// environment ("NAME=value" lines; "#n" is the n-th variable): never a
// panic, the same outcome twice, and no error holding a password or
// secret the file sets. Paths of other files (clouds.yaml, CA and keys)
// are left out, so the fuzzer reads no file of the machine.
func FuzzCloudConf(f *testing.F) {
	for _, s := range [][2]string{
		{readFile(f, fuzzCloudConf), ""},
		{"[Global]\nauth-url = \"https://keystone.example.com:5000/v3\"\nusername = ccm\npassword = \"p#ss;word with spaces\"   # quoted\nuser-domain-name = Default\ntenant-name = k8s\nregion = RegionOne\ntls-insecure = yes\n", "OS_CCM_REGIONAL=true"},
		{"[LoadBalancer]\ncreate-monitor\nmonitor-delay = 60s\nmonitor-timeout = 90s\nlb-method = least_connections\nmax-shared-lb = 0x4\n[loadbalancerclass \"public\"]\nfloating-network-id = x\n", ""},
		{"[Networking]\npublic-network-name = public\npublic-network-name = ext\naddress-sort-order = 10.0.0.0/8, nonsense\n[Metadata]\nsearch-order = nowhere\nrequest-timeout = -1s\n", ""},
		{"[Global]\npassword = \"unterminated s3cr3t-pass\ntrustee-password = 's3cr3t-trustee\\'\nbogus-key = 1\n[BlockStorage]\nbs-version = v3\n[Global\n", ""},
		{"[Global]\napplication-credential-secret = s3cr3t-app-cred\n[LoadBalancer]\nenabled = maybe\nmax-shared-lb = 99999999999999999999\nuse-octavia = true\n", "OS_CLOUD=prod"},
		{"[Global]\nuse-clouds = true\ncloud = prod\n", "#0=x\n#1=\xff"},
	} {
		f.Add(s[0], s[1])
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, conf, envText string) {
		conf = fileKeys.ReplaceAllString(conf, "${1}x-$2")
		path := filepath.Join(dir, "cloud.conf")
		if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
			t.Fatal(err)
		}
		env := fuzzkit.Env[Config](t, envText)
		delete(env, "OS_CLIENT_CONFIG_FILE")
		_, err := fuzzkit.Load[Config](t, env, path, INI)
		fuzzkit.NoSecret(t, err, iniSecrets(conf)...)
	})
}

// fileKeys matches the cloud.conf keys that name files to read.
var fileKeys = regexp.MustCompile(`(?im)^(\s*)((use-clouds|clouds-file|ca-file|cert-file|key-file)\s*=)`)

// secretKey matches the cloud.conf lines that set a credential.
var secretKey = regexp.MustCompile(`(?im)^\s*(password|trustee-password|application-credential-secret)\s*=\s*(.*)$`)

// iniSecrets returns the values (quoted or not, and their unquoted core)
// the cloud.conf gives its credential keys, leaving out those it spells
// more than once: another key's error may rightly quote the same text.
func iniSecrets(conf string) []string {
	var out []string
	for _, m := range secretKey.FindAllStringSubmatch(conf, -1) {
		v := strings.TrimSpace(m[2])
		for _, s := range []string{v, strings.Trim(v, `"' `)} {
			if strings.Count(conf, s) == 1 {
				out = append(out, s)
			}
		}
	}
	return out
}

// FuzzCloudsYAML merges a fuzzed clouds.yaml and secure.yaml into [Global]
// as use-clouds does, choosing the entry cloud: never a panic, the same
// outcome twice, no error holding a password or secret of either file.
func FuzzCloudsYAML(f *testing.F) {
	for _, s := range [][3]string{
		{"clouds:\n  prod:\n    auth:\n      auth_url: https://keystone.prod:5000/v3\n      username: ccm\n      project_name: k8s\n      user_domain_name: Default\n    region_name: RegionOne\n    interface: internal\n  dev:\n    auth:\n      application_credential_id: ac-dev\n      application_credential_secret: s3cr3t-dev\n", "clouds:\n  prod:\n    auth:\n      password: s3cr3t-from-secure\n", "prod"},
		{"clouds: [password: s3cr3t-leaked\n", "", ""},
		{"clouds:\n  a:\n    profile: vexxhost\n    auth:\n      password: s3cr3t-profile\n", "clouds: {a: {auth: [1]}}", "a"},
		{"clouds:\n  a:\n    auth:\n      password: [s3cr3t-list]\n", "", "b"},
		{"clouds:\n  a: null\n  b: {}\n", "clouds:\n  b:\n    auth: null\n", ""},
	} {
		f.Add(s[0], s[1], s[2])
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, cloudsYAML, secureYAML, cloud string) {
		path := filepath.Join(dir, "clouds.yaml")
		if err := os.WriteFile(path, []byte(cloudsYAML), 0o600); err != nil {
			t.Fatal(err)
		}
		secure := filepath.Join(dir, "secure.yaml")
		_ = os.Remove(secure)
		if secureYAML != "" {
			if err := os.WriteFile(secure, []byte(secureYAML), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		var g, again GlobalSection
		_, err := mergeClouds(&g, path, cloud)
		_, err2 := mergeClouds(&again, path, cloud)
		if (err == nil) != (err2 == nil) || err != nil && err.Error() != err2.Error() {
			t.Errorf("mergeClouds is not deterministic:\n%v\n%v", err, err2)
		}
		fuzzkit.NoSecret(t, err, yamlSecrets(cloudsYAML+"\n"+secureYAML)...)
	})
}

// yamlSecret matches a clouds.yaml credential and its value.
var yamlSecret = regexp.MustCompile(`(?m)(password|application_credential_secret)\s*:\s*(.*)$`)

// yamlSecrets returns the credential values in a clouds.yaml, as written
// and unquoted, leaving out those the text spells more than once.
func yamlSecrets(text string) []string {
	var out []string
	for _, m := range yamlSecret.FindAllStringSubmatch(text, -1) {
		v := strings.TrimSpace(m[2])
		for _, s := range []string{v, strings.Trim(v, `"'[]{} `)} {
			if strings.Count(text, s) == 1 {
				out = append(out, s)
			}
		}
	}
	return out
}

func readFile(f *testing.F, path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	return string(b)
}

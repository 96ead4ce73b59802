package cloud

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"k8s.io/klog/v2/ktesting"

	"github.com/ccmkit/ccmkit/framework/config"
)

// TestCredentialSettingsAreGlobalKeys: each key re-read on a change is a
// [Global] key, a secret among them only if it is a credential.
func TestCredentialSettingsAreGlobalKeys(t *testing.T) {
	keys := map[string]bool{}
	gt := reflect.TypeFor[GlobalSection]()
	for i := range gt.NumField() {
		f := gt.Field(i)
		key := settingKey(f)
		keys[key] = true
		if f.Type == reflect.TypeFor[config.Secret]() && !credentialSettings[key] {
			t.Errorf("[Global] %s is a secret but not re-read on a change", key)
		}
	}
	for key := range credentialSettings {
		if !keys[key] {
			t.Errorf("credentialSettings: [Global] %s is no setting", key)
		}
	}
	for _, fixed := range []string{"auth-url", "region", "tenant-id", "project-name", "ca-file"} {
		if credentialSettings[fixed] {
			t.Errorf("[Global] %s is re-read on a change; it must take a restart", fixed)
		}
	}
}

func TestChangedSettings(t *testing.T) {
	old := defaults()
	old.Global = GlobalSection{AuthURL: "https://k/v3", Region: "R", Username: "u", Password: config.NewSecret("p")}
	next := old
	next.Global.Password = config.NewSecret("p2")
	next.Global.Username = "u2"
	if got := changedSettings(&old, &next); len(got) != 0 {
		t.Errorf("credentials only: changedSettings = %q, want none", got)
	}
	next.Global.Region = "R2"
	next.LoadBalancer.LBMethod = "SOURCE_IP"
	next.LoadBalancerClass = LoadBalancerClasses{"x": {SubnetID: "s"}}
	next.Networking.PublicNetworkName = []string{"pub"}
	next.RegionalProviderID = true // from the environment: never reported
	want := []string{"[Global] region", "[LoadBalancer] lb-method", "[LoadBalancerClass]", "[Networking] public-network-name"}
	if got := changedSettings(&old, &next); !slices.Equal(got, want) {
		t.Errorf("changedSettings = %q, want %q", got, want)
	}
}

func TestTakeCredentials(t *testing.T) {
	g := GlobalSection{AuthURL: "https://k/v3", Region: "R", Username: "u", Password: config.NewSecret("p"), TenantName: "t", DomainName: "D"}
	next := GlobalSection{AuthURL: "https://other/v3", Region: "R2", ApplicationCredentialID: "ac", ApplicationCredentialSecret: config.NewSecret("s"), TenantName: "t2"}
	takeCredentials(&g, &next)
	want := GlobalSection{AuthURL: "https://k/v3", Region: "R", TenantName: "t", DomainName: "D",
		ApplicationCredentialID: "ac", ApplicationCredentialSecret: config.NewSecret("s")}
	if !reflect.DeepEqual(g, want) || !sameCredentials(&g, &want) {
		t.Errorf("takeCredentials = %+v, want %+v", g, want)
	}
	if !sameCredentials(&g, &next) {
		t.Error("sameCredentials: the credentials just taken differ")
	}
	next.ApplicationCredentialSecret = config.NewSecret("s2")
	if sameCredentials(&g, &next) {
		t.Error("sameCredentials: another secret is the same")
	}
}

// TestConfWatchFollowsCloudsYAML: with [Global] use-clouds the
// credentials may be in clouds.yaml and secure.yaml; a rotated
// secure.yaml is read as a changed cloud.conf is, a rewrite with the same
// content is no change, and a broken file keeps the credentials.
func TestConfWatchFollowsCloudsYAML(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	dir := t.TempDir()
	conf := filepath.Join(dir, "cloud.conf")
	clouds := filepath.Join(dir, "clouds.yaml")
	secure := filepath.Join(dir, "secure.yaml")
	write := func(path, content string) {
		t.Helper()
		if err := os.WriteFile(path+".tmp", []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(path+".tmp", path); err != nil {
			t.Fatal(err)
		}
	}
	write(conf, "[Global]\nuse-clouds = true\nclouds-file = "+clouds+"\n")
	write(clouds, "clouds:\n  k8s:\n    region_name: R\n    auth:\n      auth_url: https://k/v3\n      username: u\n      user_domain_name: Default\n")
	write(secure, "clouds:\n  k8s:\n    auth:\n      password: pw-1\n")
	src := config.Source{File: conf, Format: INI, LookupEnv: func(string) (string, bool) { return "", false }}
	var running Config
	if err := config.Load(&running, src); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(running.cloudsFiles, []string{clouds, secure}) {
		t.Fatalf("cloudsFiles = %q", running.cloudsFiles)
	}
	w := NewConfWatch(src, &running)
	g := running.Global
	password := func() string {
		v, err := g.Password.Reveal()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}

	if w.reload(ctx, &g) || password() != "pw-1" {
		t.Fatal("reload changed the credentials of unchanged files")
	}
	write(secure, "clouds:\n  k8s:\n    auth:\n      password: pw-1\n")
	if w.reload(ctx, &g) {
		t.Error("reload changed the credentials of a file rewritten as it was")
	}
	write(secure, "clouds:\n  k8s:\n    auth:\n      password: pw-2\n")
	if !w.reload(ctx, &g) || password() != "pw-2" {
		t.Errorf("after secure.yaml changed: password %q, want pw-2", password())
	}
	write(secure, "clouds: [\n")
	if w.reload(ctx, &g) || password() != "pw-2" || w.err == nil {
		t.Errorf("after secure.yaml broke: password %q, err %v; want pw-2 kept and an error", password(), w.err)
	} else if !strings.Contains(w.err.Error(), "secure.yaml is not a valid clouds.yaml") || strings.Contains(w.err.Error(), "pw-") {
		t.Errorf("err = %v", w.err)
	}
	write(secure, "clouds:\n  k8s:\n    auth:\n      password: pw-2\n")
	if w.reload(ctx, &g) || w.err != nil {
		t.Errorf("after secure.yaml was repaired: err = %v, want nil", w.err)
	}
}

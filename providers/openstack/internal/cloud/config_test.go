package cloud

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/ccmkit/ccmkit/framework/config"
)

// loadConfig runs the framework's loader on a cloud.conf, as NewCloud does.
func loadConfig(t *testing.T, cloudConf string, env map[string]string) (*Config, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "cloud.conf")
	if err := os.WriteFile(path, []byte(cloudConf), 0o600); err != nil {
		t.Fatal(err)
	}
	var c Config
	err := config.Load(&c, config.Source{File: path, Format: INI, LookupEnv: func(k string) (string, bool) {
		v, ok := env[k]
		return v, ok
	}})
	return &c, err
}

// defaults is Config with every default tag applied and nothing else set.
func defaults() Config {
	return Config{
		LoadBalancer: LoadBalancerSection{
			Enabled: true, LBMethod: "ROUND_ROBIN", LBProvider: "amphora",
			MonitorDelay: 5 * time.Second, MonitorTimeout: 3 * time.Second,
			MonitorMaxRetries: 1, MonitorMaxRetriesDown: 3, CascadeDelete: true,
			IngressHostnameSuffix: "nip.io", MaxSharedLB: 2, ContainerStore: "barbican",
		},
		Metadata: MetadataSection{SearchOrder: "configDrive,metadataService"},
	}
}

var cmpConfig = cmp.Options{cmpopts.IgnoreUnexported(Config{})}

func TestLoadOCCMConfig(t *testing.T) {
	// A cloud.conf as OCCM users write it: comments, quotes, a blank bool,
	// repeated keys, LoadBalancerClass sections, mixed-case names, and the
	// obsolete bits OCCM ignores.
	c, err := loadConfig(t, `
; OCCM cloud.conf
[Global]
auth-url = "https://keystone.example.com:5000/v3"
username = ccm
password = "p#ss;word with spaces"   # quoted: # and ; would start a comment
user-domain-name = Default
tenant-name = k8s
tenant-domain-name = Default
region = RegionOne
os-endpoint-type = internalURL
tls-insecure = yes

[LoadBalancer]
use-octavia = true
lb-version = v2
subnet-id = 6b1e0f0c-0000-0000-0000-000000000001
floating-network-id = 6b1e0f0c-0000-0000-0000-000000000002
create-monitor
monitor-delay = 60s
monitor-timeout = 30s
monitor-max-retries = 5
lb-method = least_connections
max-shared-lb = 0x4
manage-security-groups = false

[LoadBalancerClass "internal"]
subnet-id = 6b1e0f0c-0000-0000-0000-000000000003
[loadbalancerclass "public"]
floating-network-id = 6b1e0f0c-0000-0000-0000-000000000004

[Networking]
public-network-name = public
public-network-name = ext
internal-network-name = private
ipv6-support-disabled = true
address-sort-order = 10.0.0.0/8, 192.168.0.0/16

[Route]
router-id = r-1

[Metadata]
search-order = metadataService
request-timeout = 20s

[BlockStorage]
bs-version = v3
`, nil)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	want := defaults()
	want.Global = GlobalSection{
		AuthURL: "https://keystone.example.com:5000/v3", Username: "ccm",
		Password: config.NewSecret("p#ss;word with spaces"), UserDomainName: "Default",
		TenantName: "k8s", TenantDomainName: "Default", Region: "RegionOne",
		EndpointType: "internalURL", TLSInsecure: true,
	}
	lb := &want.LoadBalancer
	lb.UseOctavia, lb.LBVersion = true, "v2"
	lb.SubnetID, lb.FloatingNetworkID = "6b1e0f0c-0000-0000-0000-000000000001", "6b1e0f0c-0000-0000-0000-000000000002"
	lb.CreateMonitor, lb.MonitorDelay, lb.MonitorTimeout, lb.MonitorMaxRetries = true, time.Minute, 30*time.Second, 5
	lb.LBMethod, lb.MaxSharedLB = "LEAST_CONNECTIONS", 4
	want.LoadBalancerClass = LoadBalancerClasses{
		"internal": {SubnetID: "6b1e0f0c-0000-0000-0000-000000000003"},
		"public":   {FloatingNetworkID: "6b1e0f0c-0000-0000-0000-000000000004"},
	}
	want.Networking = NetworkingSection{
		PublicNetworkName: []string{"public", "ext"}, InternalNetworkName: []string{"private"},
		IPv6SupportDisabled: true, AddressSortOrder: "10.0.0.0/8, 192.168.0.0/16",
	}
	want.Route.RouterID = "r-1"
	want.Metadata = MetadataSection{SearchOrder: "metadataService", RequestTimeout: 20 * time.Second}
	want.BlockStorage.BSVersion = "v3"
	if diff := cmp.Diff(want, *c, cmpConfig); diff != "" {
		t.Errorf("config (-want +got):\n%s", diff)
	}
	wantNotes := []string{
		"[LoadBalancer] use-octavia is obsolete and ignored: Octavia is always used",
		"[BlockStorage] ignored: [BlockStorage] is read by the Cinder CSI driver, not by the cloud-controller-manager",
	}
	if diff := cmp.Diff(wantNotes, c.notes); diff != "" {
		t.Errorf("notes (-want +got):\n%s", diff)
	}
	if s := fmt.Sprintf("%v %+v %#v", c, c, c.Global); strings.Contains(s, "p#ss") {
		t.Errorf("printing the config reveals the password: %s", s)
	}
}

// TestLoadReportsEveryProblem: one round of fixes, not one per restart.
func TestLoadReportsEveryProblem(t *testing.T) {
	const secret = "s3cret-value"
	_, err := loadConfig(t, `[Global]
auth-url = https://keystone:5000/v3
region = RegionOne
application-credential-id = ac
application-credential-secret = `+secret+`
passwd = `+secret+`
tls-insecure = maybe

[LoadBalancer]
monitor-delay = 5
monitor-max-retries = -1
create-monitor = sometimes

[Loadbalancer "x"]
[LoadBalancerClass]

[Networkin]
public-network-name = public
[Networkin]

[Metadata]
search-order
`, nil)
	if err == nil {
		t.Fatal("Load succeeded")
	}
	for _, want := range []string{
		`[Global] passwd: unknown key (line 6)`,
		`[Global] tls-insecure: invalid bool "maybe" (want true or false) (line 7)`,
		`[LoadBalancer] monitor-delay: invalid duration "5" (want a number with a unit, such as 5s) (line 10)`,
		`[LoadBalancer] monitor-max-retries: invalid uint "-1" (line 11)`,
		`[LoadBalancer] create-monitor: invalid bool "sometimes" (want true or false) (line 12)`,
		`[Loadbalancer] takes no name, got [Loadbalancer "x"] (line 14)`,
		`[LoadBalancerClass] needs a name: [LoadBalancerClass "<name>"] (line 15)`,
		`unknown section [Networkin] (line 17)`,
		`[Metadata] search-order: needs a value (line 22)`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not contain %q:\n%v", want, err)
		}
	}
	if n := strings.Count(err.Error(), "Networkin]"); n != 1 {
		t.Errorf("unknown section reported %d times, want once:\n%v", n, err)
	}
	if strings.Contains(err.Error(), secret) {
		t.Errorf("error reveals a secret:\n%v", err)
	}
}

func TestLoadSyntaxErrors(t *testing.T) {
	_, err := loadConfig(t, "key = value\n[Global\nregion = \"unterminated\n[Global]\nregion RegionOne\n", nil)
	if err == nil {
		t.Fatal("Load succeeded")
	}
	for _, want := range []string{"line 1: key: expected a [section] header first", "line 2: expected ] after the section name", "line 5: region: expected ="} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not contain %q:\n%v", want, err)
		}
	}
}

func TestValidate(t *testing.T) {
	const global = "[Global]\nauth-url = https://keystone:5000/v3\nregion = RegionOne\n"
	tests := []struct {
		name     string
		conf     string
		env      map[string]string
		wantErrs []string
	}{
		{
			name: "nothing",
			conf: "",
			wantErrs: []string{
				"[Global] auth-url: required",
				"[Global] region: required",
				"[Global] credentials: set username (or user-id) and password, or application-credential-id (or -name) and application-credential-secret",
			},
		},
		{
			name:     "password without a user",
			conf:     global + "password = x\n",
			wantErrs: []string{"[Global] username or user-id: required with password"},
		},
		{
			name:     "user without a password",
			conf:     global + "username = u\nuser-domain-name = Default\n",
			wantErrs: []string{"[Global] password: required with username or user-id"},
		},
		{
			name:     "username without a domain",
			conf:     global + "username = u\npassword = x\ntenant-name = p\n",
			wantErrs: []string{"[Global] username: needs user-domain-name", "[Global] tenant-name: needs tenant-domain-name"},
		},
		{
			name:     "application credential without its secret",
			conf:     global + "application-credential-id = ac\n",
			wantErrs: []string{"[Global] application-credential-secret: required"},
		},
		{
			name:     "application credential name without a user",
			conf:     global + "application-credential-name = ac\napplication-credential-secret = s\n",
			wantErrs: []string{"[Global] application-credential-name: set user-id, or username"},
		},
		{
			name:     "trust without a trustee",
			conf:     global + "trust-id = t\n",
			wantErrs: []string{"[Global] trust-id: set trustee-id", "[Global] trust-id: set trustee-password"},
		},
		{
			name: "bad values",
			conf: "[Global]\nauth-url = keystone:5000\nregion = R\nuser-id = u\npassword = p\nos-endpoint-type = private\n" +
				"tenant-id = a\nproject-id = b\ncert-file = c.pem\n" +
				"[LoadBalancer]\nlb-method = RANDOM\nlb-version = v1\nmonitor-delay = 1s\nmonitor-timeout = 2s\n" +
				"monitor-max-retries = 11\nmax-shared-lb = 0\ncontainer-store = vault\nnode-selector = =x\n" +
				"[Networking]\naddress-sort-order = 10.0.0.0/8,10.0.0.300/8\n" +
				"[Metadata]\nsearch-order = configDrive,configDrive,cloudInit\n",
			env: map[string]string{"OS_CCM_REGIONAL": "true"},
			wantErrs: []string{
				"OS_CCM_REGIONAL=true: regional providerIDs",
				"[Global] auth-url: keystone:5000 is not an http(s) URL",
				`[Global] os-endpoint-type: "private" is not public, internal or admin`,
				"[Global] tenant-id and project-id are aliases but differ; set one",
				"[Global] cert-file and key-file: set both, or neither",
				`[LoadBalancer] lb-method: "RANDOM" is not one of ROUND_ROBIN, LEAST_CONNECTIONS, SOURCE_IP, SOURCE_IP_PORT`,
				`[LoadBalancer] lb-version: "v1" is not supported`,
				"[LoadBalancer] monitor-timeout: 2s is longer than monitor-delay 1s",
				"[LoadBalancer] monitor-max-retries: 11 is not between 1 and 10",
				"[LoadBalancer] max-shared-lb: must be at least 1, got 0",
				`[LoadBalancer] container-store: "vault" is not barbican or external`,
				`[LoadBalancer] node-selector: "=x" has no label key`,
				`[Networking] address-sort-order: "10.0.0.300/8" is not a CIDR`,
				"[Metadata] search-order: configDrive is listed twice",
				`[Metadata] search-order: "cloudInit" is not configDrive or metadataService`,
			},
		},
		{
			name: "password, all settings",
			conf: global + "username = u\npassword = p\nuser-domain-id = default\nproject-name = p\nproject-domain-name = Default\n",
		},
		{
			name: "application credential",
			conf: global + "application-credential-id = ac\napplication-credential-secret = s\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := loadConfig(t, tt.conf, tt.env)
			if len(tt.wantErrs) == 0 {
				if err != nil {
					t.Fatalf("Load: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("Load succeeded")
			}
			for _, want := range tt.wantErrs {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error does not contain %q:\n%v", want, err)
				}
			}
		})
	}
}

func TestProjectAliases(t *testing.T) {
	c, err := loadConfig(t, "[Global]\nauth-url = https://k/v3\nregion = R\nuser-id = u\npassword = p\n"+
		"project-name = proj\nproject-domain-id = d\ntenant-name = proj\n", nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Global.TenantName != "proj" || c.Global.TenantDomainID != "d" {
		t.Errorf("aliases not applied: tenant-name %q, tenant-domain-id %q", c.Global.TenantName, c.Global.TenantDomainID)
	}
}

func TestUseClouds(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cloudsFile := write("clouds.yaml", `clouds:
  prod:
    auth:
      auth_url: https://keystone.prod:5000/v3
      username: ccm
      project_name: k8s
      user_domain_name: Default
      project_domain_id: default
    region_name: RegionOne
    interface: internal
    cacert: /etc/ssl/prod.pem
  dev:
    auth:
      auth_url: https://keystone.dev:5000/v3
      application_credential_id: ac-dev
      application_credential_secret: dev-secret
    region_name: DevRegion
`)
	write("secure.yaml", "clouds:\n  prod:\n    auth:\n      password: from-secure-yaml\n")

	t.Run("clouds-file and cloud; cloud.conf wins", func(t *testing.T) {
		c, err := loadConfig(t, "[Global]\nuse-clouds = true\nclouds-file = "+cloudsFile+"\ncloud = prod\nregion = Override\n", nil)
		if err != nil {
			t.Fatal(err)
		}
		want := GlobalSection{
			UseClouds: true, CloudsFile: cloudsFile, Cloud: "prod",
			AuthURL: "https://keystone.prod:5000/v3", Username: "ccm", Password: config.NewSecret("from-secure-yaml"),
			TenantName: "k8s", UserDomainName: "Default", TenantDomainID: "default",
			Region: "Override", EndpointType: "internal", CAFile: "/etc/ssl/prod.pem",
		}
		if diff := cmp.Diff(want, c.Global); diff != "" {
			t.Errorf("[Global] (-want +got):\n%s", diff)
		}
	})
	t.Run("OS_CLIENT_CONFIG_FILE and OS_CLOUD", func(t *testing.T) {
		c, err := loadConfig(t, "[Global]\nuse-clouds = true\n", map[string]string{"OS_CLIENT_CONFIG_FILE": cloudsFile, "OS_CLOUD": "dev"})
		if err != nil {
			t.Fatal(err)
		}
		g := c.Global
		if g.ApplicationCredentialID != "ac-dev" || g.Region != "DevRegion" || g.AuthURL != "https://keystone.dev:5000/v3" {
			t.Errorf("[Global] = %+v", g)
		}
		if s, _ := g.ApplicationCredentialSecret.Reveal(); s != "dev-secret" {
			t.Errorf("application-credential-secret not read from clouds.yaml")
		}
	})
	t.Run("errors", func(t *testing.T) {
		_, err := loadConfig(t, "[Global]\nuse-clouds = true\nclouds-file = "+cloudsFile+"\n", nil)
		if err == nil || !strings.Contains(err.Error(), "[Global] cloud: required, "+cloudsFile+" has 2 entries") {
			t.Errorf("no cloud: %v", err)
		}
		_, err = loadConfig(t, "[Global]\nuse-clouds = true\nclouds-file = "+cloudsFile+"\ncloud = nope\n", nil)
		if err == nil || !strings.Contains(err.Error(), `has no entry "nope" (entries: ["dev" "prod"])`) {
			t.Errorf("unknown cloud: %v", err)
		}
		bad := write("bad.yaml", "clouds: [password: leaked-secret\n")
		_, err = loadConfig(t, "[Global]\nuse-clouds = true\nclouds-file = "+bad+"\n", nil)
		if err == nil || !strings.Contains(err.Error(), "is not a valid clouds.yaml") || strings.Contains(err.Error(), "leaked-secret") {
			t.Errorf("bad YAML: %v", err)
		}
	})
}

// TestConfigFields checks the tags the framework reads (defaults, env) and
// that the reference page renders.
func TestConfigFields(t *testing.T) {
	if _, err := config.Fields(Config{}); err != nil {
		t.Fatal(err)
	}
	md, err := config.Markdown("OpenStack configuration", Config{})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"`Global.auth-url`", "`LoadBalancer.monitor-delay`", "`5s`", "`OS_CCM_REGIONAL`", "`LoadBalancerClass`"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("Markdown lacks %s", want)
		}
	}
}

package openstack_test

import (
	"context"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	cloudprovider "k8s.io/cloud-provider"
	cloudproviderapi "k8s.io/cloud-provider/api"
	"k8s.io/klog/v2/ktesting"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/framework/cloudapi"
	"github.com/ccmkit/ccmkit/framework/frameworktest"
	"github.com/ccmkit/ccmkit/providers/openstack"
	"github.com/ccmkit/ccmkit/providers/openstack/openstacksim"
)

// newCloud runs what framework.Main runs at start-up: load cloudConf, Init,
// build the cloud. The instance cache is off, so every lookup reaches the
// simulator, and each request is tried once, so a fault is seen as is.
func newCloud(t *testing.T, cloudConf string) (*framework.Cloud, context.Context, error) {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	path := filepath.Join(t.TempDir(), "cloud.conf")
	if err := os.WriteFile(path, []byte(cloudConf), 0o600); err != nil {
		t.Fatal(err)
	}
	cloud, err := framework.NewCloud(ctx, openstack.New(), &framework.Env{
		ClusterName:      "test-cluster",
		CloudConfigFile:  path,
		LookupEnv:        func(string) (string, bool) { return "", false },
		CloudAPI:         cloudapi.Options{MaxRetries: -1, Timeout: 2 * time.Second},
		InstanceCacheTTL: -1,
	})
	return cloud, ctx, err
}

func mustCloud(t *testing.T, cloudConf string) (cloudprovider.InstancesV2, context.Context) {
	t.Helper()
	cloud, ctx, err := newCloud(t, cloudConf)
	if err != nil {
		t.Fatalf("NewCloud: %v", err)
	}
	v2, ok := cloud.InstancesV2()
	if !ok {
		t.Fatal("no InstancesV2")
	}
	return v2, ctx
}

func node(name, providerID string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.NodeSpec{ProviderID: providerID}}
}

func TestAuthMethods(t *testing.T) {
	sim := openstacksim.NewServer(t, openstacksim.Options{
		Users: []openstacksim.User{
			{Name: "ccm", Password: "pw-1", Domain: "Default", Project: "k8s"},
			{Name: "other", Password: "pw-2", Domain: "corp", Project: "k8s-2", ProjectDomain: "corp"},
		},
		ApplicationCredentials: []openstacksim.ApplicationCredential{
			{ID: "ac-id", Secret: "ac-secret", User: "ccm"},
			{Name: "ac-name", Secret: "ac-secret-2", User: "other"},
		},
	})
	global := "[Global]\nauth-url = " + sim.AuthURL() + "\nregion = " + sim.Region() + "\n"
	for _, tt := range []struct{ name, conf string }{
		{"simulator's own cloud.conf", sim.CloudConfig()},
		{"password, tenant-name", global + "username = ccm\npassword = pw-1\ndomain-name = Default\ntenant-name = k8s\n"},
		{"password, domains of their own", global + "username = other\npassword = pw-2\nuser-domain-name = corp\ntenant-name = k8s-2\ntenant-domain-name = corp\n"},
		{"password, default project", global + "username = ccm\npassword = pw-1\nuser-domain-name = Default\n"},
		{"application credential ID", global + "application-credential-id = ac-id\napplication-credential-secret = ac-secret\n"},
		{"application credential name", global + "application-credential-name = ac-name\napplication-credential-secret = ac-secret-2\nusername = other\nuser-domain-name = corp\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, _, err := newCloud(t, tt.conf); err != nil {
				t.Fatalf("NewCloud: %v", err)
			}
		})
	}
	failures := []frameworktest.StartupFailure{
		{
			Name:        "wrong password",
			CloudConfig: global + "username = ccm\npassword = nope\nuser-domain-name = Default\n",
			Want:        []string{"authentication failed", "answered 401 Unauthorized", "check [Global] username and password"},
		},
		{
			Name:        "wrong application credential secret",
			CloudConfig: global + "application-credential-id = ac-id\napplication-credential-secret = nope\n",
			Want:        []string{"authentication failed", "check [Global] application-credential-id and application-credential-secret"},
		},
		{
			Name:        "region without endpoints",
			CloudConfig: strings.Replace(sim.CloudConfig(), "region = "+sim.Region(), "region = Elsewhere", 1),
			Want:        []string{`no compute (Nova) endpoint for [Global] region "Elsewhere"`},
		},
		{
			Name:        "Keystone unreachable",
			CloudConfig: "[Global]\nauth-url = http://127.0.0.1:1/v3\nregion = R\nuser-id = u\npassword = p\n",
			Want:        []string{"cannot authenticate with Keystone at http://127.0.0.1:1/v3 ([Global] auth-url)"},
		},
	}
	for i := range failures {
		failures[i].Secrets = []string{"nope", "pw-1", "ac-secret"}
	}
	frameworktest.RunStartupFailures(t, newProvider, failures)
}

func newProvider() framework.Provider { return openstack.New() }

// TestCloudConfigRotation is the other providers' RunSecretRotation for
// OpenStack, whose credentials are cloud.conf keys: Keystone changes the
// password (revoking the CCM's token), then the cloud-config Secret
// volume's cloud.conf is replaced by one with the new password, and the
// next token is requested with it, without a restart.
func TestCloudConfigRotation(t *testing.T) {
	frameworktest.RunCloudConfigRotation(t, harness, func(conf, secret string) string {
		return passwordLine.ReplaceAllLiteralString(conf, "password = "+secret)
	})
}

var passwordLine = regexp.MustCompile(`(?m)^password = .*$`)

// TestSettings pins the settings: OCCM's cloud.conf keys, by section, so
// an OCCM cloud.conf keeps working, then the three variables it reads.
func TestSettings(t *testing.T) {
	frameworktest.CheckSettings(t, openstack.New(), []string{
		`Global.auth-url string required=false default=""`,
		`Global.region string required=false default=""`,
		`Global.os-endpoint-type string required=false default=""`,
		`Global.username string required=false default=""`,
		`Global.user-id string required=false default=""`,
		`Global.password secret required=false default=""`,
		`Global.tenant-id string required=false default=""`,
		`Global.tenant-name string required=false default=""`,
		`Global.project-id string required=false default=""`,
		`Global.project-name string required=false default=""`,
		`Global.tenant-domain-id string required=false default=""`,
		`Global.tenant-domain-name string required=false default=""`,
		`Global.project-domain-id string required=false default=""`,
		`Global.project-domain-name string required=false default=""`,
		`Global.user-domain-id string required=false default=""`,
		`Global.user-domain-name string required=false default=""`,
		`Global.domain-id string required=false default=""`,
		`Global.domain-name string required=false default=""`,
		`Global.trust-id string required=false default=""`,
		`Global.trustee-id string required=false default=""`,
		`Global.trustee-password secret required=false default=""`,
		`Global.application-credential-id string required=false default=""`,
		`Global.application-credential-name string required=false default=""`,
		`Global.application-credential-secret secret required=false default=""`,
		`Global.ca-file string required=false default=""`,
		`Global.cert-file string required=false default=""`,
		`Global.key-file string required=false default=""`,
		`Global.tls-insecure bool required=false default=""`,
		`Global.use-clouds bool required=false default=""`,
		`Global.clouds-file string required=false default=""`,
		`Global.cloud string required=false default=""`,
		`LoadBalancer.enabled bool required=false default="true"`,
		`LoadBalancer.use-octavia bool required=false default=""`,
		`LoadBalancer.lb-version string required=false default=""`,
		`LoadBalancer.subnet-id string required=false default=""`,
		`LoadBalancer.member-subnet-id string required=false default=""`,
		`LoadBalancer.network-id string required=false default=""`,
		`LoadBalancer.floating-network-id string required=false default=""`,
		`LoadBalancer.floating-subnet-id string required=false default=""`,
		`LoadBalancer.floating-subnet string required=false default=""`,
		`LoadBalancer.floating-subnet-tags string required=false default=""`,
		`LoadBalancer.lb-method string required=false default="ROUND_ROBIN"`,
		`LoadBalancer.lb-provider string required=false default="amphora"`,
		`LoadBalancer.create-monitor bool required=false default=""`,
		`LoadBalancer.monitor-delay duration required=false default="5s"`,
		`LoadBalancer.monitor-timeout duration required=false default="3s"`,
		`LoadBalancer.monitor-max-retries uint required=false default="1"`,
		`LoadBalancer.monitor-max-retries-down uint required=false default="3"`,
		`LoadBalancer.manage-security-groups bool required=false default=""`,
		`LoadBalancer.internal-lb bool required=false default=""`,
		`LoadBalancer.node-selector string required=false default=""`,
		`LoadBalancer.cascade-delete bool required=false default="true"`,
		`LoadBalancer.flavor-id string required=false default=""`,
		`LoadBalancer.availability-zone string required=false default=""`,
		`LoadBalancer.enable-ingress-hostname bool required=false default=""`,
		`LoadBalancer.ingress-hostname-suffix string required=false default="nip.io"`,
		`LoadBalancer.max-shared-lb int required=false default="2"`,
		`LoadBalancer.container-store string required=false default="barbican"`,
		`LoadBalancer.default-tls-container-ref string required=false default=""`,
		`LoadBalancer.provider-requires-serial-api-calls bool required=false default=""`,
		`LoadBalancerClass LoadBalancerClasses required=false default=""`,
		`Networking.ipv6-support-disabled bool required=false default=""`,
		`Networking.public-network-name []string required=false default=""`,
		`Networking.internal-network-name []string required=false default=""`,
		`Networking.address-sort-order string required=false default=""`,
		`Route.router-id string required=false default=""`,
		`Metadata.search-order string required=false default="configDrive,metadataService"`,
		`Metadata.request-timeout duration required=false default=""`,
		`BlockStorage.node-volume-attach-limit int required=false default=""`,
		`BlockStorage.rescan-on-resize bool required=false default=""`,
		`BlockStorage.ignore-volume-az bool required=false default=""`,
		`BlockStorage.ignore-volume-microversion bool required=false default=""`,
		`BlockStorage.bs-version string required=false default=""`,
		`BlockStorage.trust-device-path bool required=false default=""`,
		`OS_CCM_REGIONAL bool required=false default=""`,
		`OS_CLOUD string required=false default=""`,
		`OS_CLIENT_CONFIG_FILE string required=false default=""`,
	})
}

// TestReauthentication: an expired token is replaced once, transparently.
func TestReauthentication(t *testing.T) {
	sim := openstacksim.NewServer(t, openstacksim.Options{})
	id := sim.AddServer(openstacksim.NovaServer{Name: "node-1"}).ID
	inst, ctx := mustCloud(t, sim.CloudConfig())
	issued := sim.TokensIssued()
	sim.ExpireTokens()
	ok, err := inst.InstanceExists(ctx, node("node-1", "openstack:///"+id))
	if err != nil || !ok {
		t.Fatalf("InstanceExists after token expiry = %v, %v; want true", ok, err)
	}
	if got := sim.TokensIssued() - issued; got != 1 {
		t.Errorf("%d tokens issued after expiry, want 1", got)
	}
}

func TestInstanceMetadata(t *testing.T) {
	sim := openstacksim.NewServer(t, openstacksim.Options{})
	d := sim.Defaults()
	svc := sim.AddNetwork(openstacksim.Network{Name: "services"})
	sim.AddSubnet(openstacksim.Subnet{NetworkID: svc.ID, CIDR: "172.16.0.0/24"})
	multi := sim.AddServer(openstacksim.NovaServer{
		Name: "Node-1", Flavor: "m1.large", AZ: "AZ 1 (east)",
		Metadata: map[string]string{"hostname": "node-1.example.com"},
		Ports: []openstacksim.ServerPort{
			{Network: d.NetworkID, FixedIPs: []string{"10.0.0.11"}, FloatingIP: "auto"},
			{Network: svc.ID, FixedIPs: []string{"172.16.0.11"}},
		},
	})
	floating := multi.Ports[0].FloatingIP
	off := sim.AddServer(openstacksim.NovaServer{Name: "node-2", Status: openstacksim.StatusShutoff})

	addr := func(t corev1.NodeAddressType, a string) corev1.NodeAddress {
		return corev1.NodeAddress{Type: t, Address: a}
	}
	tests := []struct {
		name       string
		networking string
		node       *corev1.Node
		want       *cloudprovider.InstanceMetadata
	}{
		{
			name: "by providerID",
			node: node("node-1", "openstack:///"+multi.ID),
			want: &cloudprovider.InstanceMetadata{
				ProviderID: "openstack:///" + multi.ID, InstanceType: "m1.large", Zone: "AZ-1-east", Region: openstacksim.DefaultRegion,
				NodeAddresses: []corev1.NodeAddress{
					addr(corev1.NodeInternalIP, "10.0.0.11"), addr(corev1.NodeInternalIP, "172.16.0.11"),
					addr(corev1.NodeExternalIP, floating), addr(corev1.NodeHostName, "node-1.example.com"),
				},
			},
		},
		{
			name:       "regional providerID, by [Networking]",
			networking: "[Networking]\ninternal-network-name = services\naddress-sort-order = 172.16.0.0/12\n",
			node:       node("node-1", "openstack://"+openstacksim.DefaultRegion+"/"+multi.ID),
			want: &cloudprovider.InstanceMetadata{
				ProviderID: "openstack:///" + multi.ID, InstanceType: "m1.large", Zone: "AZ-1-east", Region: openstacksim.DefaultRegion,
				NodeAddresses: []corev1.NodeAddress{
					addr(corev1.NodeInternalIP, "172.16.0.11"),
					addr(corev1.NodeExternalIP, floating), addr(corev1.NodeHostName, "node-1.example.com"),
				},
			},
		},
		{
			name: "by name: the server's lower-cased name",
			node: node("node-1", ""),
			want: &cloudprovider.InstanceMetadata{
				ProviderID: "openstack:///" + multi.ID, InstanceType: "m1.large", Zone: "AZ-1-east", Region: openstacksim.DefaultRegion,
				NodeAddresses: []corev1.NodeAddress{
					addr(corev1.NodeInternalIP, "10.0.0.11"), addr(corev1.NodeInternalIP, "172.16.0.11"),
					addr(corev1.NodeExternalIP, floating), addr(corev1.NodeHostName, "node-1.example.com"),
				},
			},
		},
		{
			name: "shut off, by name",
			node: node("node-2", ""),
			want: &cloudprovider.InstanceMetadata{
				ProviderID: "openstack:///" + off.ID, InstanceType: "m1.small", Zone: "nova", Region: openstacksim.DefaultRegion,
				NodeAddresses: []corev1.NodeAddress{addr(corev1.NodeInternalIP, off.Ports[0].FixedIPs[0])},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inst, ctx := mustCloud(t, sim.CloudConfig()+tt.networking)
			got, err := inst.InstanceMetadata(ctx, tt.node)
			if err != nil {
				t.Fatalf("InstanceMetadata: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("InstanceMetadata (-want +got):\n%s", diff)
			}
		})
	}

	inst, ctx := mustCloud(t, sim.CloudConfig())
	if down, err := inst.InstanceShutdown(ctx, node("node-2", "openstack:///"+off.ID)); err != nil || !down {
		t.Errorf("InstanceShutdown(SHUTOFF) = %v, %v; want true", down, err)
	}
	if down, err := inst.InstanceShutdown(ctx, node("node-1", "openstack:///"+multi.ID)); err != nil || down {
		t.Errorf("InstanceShutdown(ACTIVE) = %v, %v; want false", down, err)
	}
}

// TestFlavorLookups: with microversion 2.47 the flavor name comes with the
// server; without, each flavor is fetched once.
func TestFlavorLookups(t *testing.T) {
	sim := openstacksim.NewServer(t, openstacksim.Options{})
	var ids []string
	for _, name := range []string{"a", "b", "c"} {
		ids = append(ids, sim.AddServer(openstacksim.NovaServer{Name: name, Flavor: "m1.medium"}).ID)
	}
	flavorGets := func() int { return sim.Stats()["GET /compute/v2.1/flavors/{id}"] }
	lookUp := func(inst cloudprovider.InstancesV2, ctx context.Context) {
		t.Helper()
		for _, id := range ids {
			md, err := inst.InstanceMetadata(ctx, node("x", "openstack:///"+id))
			if err != nil || md.InstanceType != "m1.medium" {
				t.Fatalf("InstanceMetadata = %+v, %v", md, err)
			}
		}
	}

	inst, ctx := mustCloud(t, sim.CloudConfig())
	lookUp(inst, ctx)
	if n := flavorGets(); n != 0 {
		t.Errorf("%d flavor GETs at microversion 2.47, want 0", n)
	}

	restore := sim.Fail(http.StatusServiceUnavailable, "GET /compute/v2.1/{$}")
	inst, ctx = mustCloud(t, sim.CloudConfig()) // no version document: Nova's default microversion
	restore()
	lookUp(inst, ctx)
	if n := flavorGets(); n != 1 {
		t.Errorf("%d flavor GETs without a microversion, want 1", n)
	}
}

// TestNotFound: only Nova's own answer that a server is gone makes
// InstanceExists false (and deletes the Node); faults never do.
func TestNotFound(t *testing.T) {
	sim := openstacksim.NewServer(t, openstacksim.Options{})
	id := sim.AddServer(openstacksim.NovaServer{Name: "node-1"}).ID
	sim.AddServer(openstacksim.NovaServer{Name: "node.2"})
	inst, ctx := mustCloud(t, sim.CloudConfig())

	for _, n := range []*corev1.Node{node("node-1", "openstack:///"+id), node("node-1", "")} {
		if ok, err := inst.InstanceExists(ctx, n); err != nil || !ok {
			t.Errorf("InstanceExists(%q, %q) = %v, %v; want true", n.Name, n.Spec.ProviderID, ok, err)
		}
	}
	// Nova's name filter is a regular expression: "node-2" must not find
	// "node.2" nor "node.2" find "nodex2".
	if ok, err := inst.InstanceExists(ctx, node("node-2", "")); err != nil || ok {
		t.Errorf("InstanceExists(node-2) = %v, %v; want false", ok, err)
	}

	for _, status := range []int{http.StatusInternalServerError, http.StatusUnauthorized, http.StatusNotFound} {
		restore := sim.Inject(openstacksim.Fault{Status: status, Op: "GET /compute/*"})
		for _, n := range []*corev1.Node{node("node-1", "openstack:///"+id), node("node-1", "")} {
			ok, err := inst.InstanceExists(ctx, n)
			if status == http.StatusNotFound && n.Spec.ProviderID != "" {
				// An injected 404 has Nova's JSON error body: authoritative.
				continue
			}
			if err == nil {
				t.Errorf("status %d: InstanceExists(%q, %q) = %v, nil; want an error", status, n.Name, n.Spec.ProviderID, ok)
			}
		}
		restore()
	}

	sim.DeleteServer(id)
	for _, n := range []*corev1.Node{node("node-1", "openstack:///"+id), node("node-1", "")} {
		if ok, err := inst.InstanceExists(ctx, n); err != nil || ok {
			t.Errorf("deleted: InstanceExists(%q, %q) = %v, %v; want false, nil", n.Name, n.Spec.ProviderID, ok, err)
		}
	}
	// A Node the node controller has not initialized yet (the framework
	// answers an initialized one's address refresh with what it holds).
	uninitialized := node("node-1", "openstack:///"+id)
	uninitialized.Spec.Taints = []corev1.Taint{{Key: cloudproviderapi.TaintExternalCloudProvider, Effect: corev1.TaintEffectNoSchedule}}
	if _, err := inst.InstanceMetadata(ctx, uninitialized); err == nil || !strings.Contains(err.Error(), cloudprovider.InstanceNotFound.Error()) {
		t.Errorf("deleted: InstanceMetadata error = %v, want InstanceNotFound", err)
	}
}

func TestDuplicateNames(t *testing.T) {
	sim := openstacksim.NewServer(t, openstacksim.Options{})
	sim.AddServer(openstacksim.NovaServer{Name: "twin"})
	sim.AddServer(openstacksim.NovaServer{Name: "TWIN"})
	cloud, ctx, err := newCloud(t, sim.CloudConfig())
	if err != nil {
		t.Fatal(err)
	}
	inst, _ := cloud.InstancesV2()
	if ok, err := inst.InstanceExists(ctx, node("twin", "")); err == nil || !strings.Contains(err.Error(), `"twin"`) {
		t.Errorf("InstanceExists(twin) = %v, %v; want an error", ok, err)
	}
	if md, err := inst.InstanceMetadata(ctx, node("twin", "")); err == nil {
		t.Errorf("InstanceMetadata(twin) = providerID %q; want an error, never a guess", md.ProviderID)
	}
}

// TestListInstances follows Nova's pages to the end.
func TestListInstances(t *testing.T) {
	sim := openstacksim.NewServer(t, openstacksim.Options{MaxLimit: 2})
	want := map[string]string{}
	for _, name := range []string{"n1", "n2", "n3", "n4", "n5"} {
		want[sim.AddServer(openstacksim.NovaServer{Name: name}).ID] = name
	}
	cloud, ctx, err := newCloud(t, sim.CloudConfig())
	if err != nil {
		t.Fatal(err)
	}
	before := sim.Stats()["GET /compute/v2.1/servers/detail"]
	list, err := cloud.Provider().(framework.InstancesProvider).Instances().ListInstances(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, i := range list {
		got[i.ID] = i.Name
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("listed (-want +got):\n%s", diff)
	}
	if pages := sim.Stats()["GET /compute/v2.1/servers/detail"] - before; pages < 3 {
		t.Errorf("%d list requests for 5 servers in pages of 2, want at least 3", pages)
	}
}

// TestTLS: [Global] ca-file and tls-insecure apply to every API call.
func TestTLS(t *testing.T) {
	sim := openstacksim.New(openstacksim.Options{})
	ts := httptest.NewTLSServer(sim.Handler())
	t.Cleanup(ts.Close)
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	pemCert := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ts.Certificate().Raw})
	if err := os.WriteFile(caFile, pemCert, 0o600); err != nil {
		t.Fatal(err)
	}
	conf := sim.CloudConfigFor(ts.URL)

	if _, _, err := newCloud(t, conf); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("without ca-file: NewCloud error = %v, want a certificate error", err)
	}
	for _, extra := range []string{"ca-file = " + caFile, "tls-insecure = true"} {
		withTLS := strings.Replace(conf, "[Global]\n", "[Global]\n"+extra+"\n", 1)
		if _, _, err := newCloud(t, withTLS); err != nil {
			t.Errorf("%s: NewCloud: %v", extra, err)
		}
	}
	bad := strings.Replace(conf, "[Global]\n", "[Global]\nca-file = "+filepath.Join(t.TempDir(), "missing.pem")+"\n", 1)
	if _, _, err := newCloud(t, bad); err == nil || !strings.Contains(err.Error(), "[Global] ca-file:") {
		t.Errorf("missing ca-file: NewCloud error = %v, want one naming [Global] ca-file", err)
	}
}

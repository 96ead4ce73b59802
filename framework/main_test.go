package framework_test

import (
	"bytes"
	"strings"
	"sync"
	"testing"

	"github.com/spf13/pflag"
	cloudprovider "k8s.io/cloud-provider"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/framework/frameworktest"
)

func TestCommandHelpShowsStandardAndExtraFlags(t *testing.T) {
	extra := pflag.NewFlagSet("extra", pflag.ContinueOnError)
	extra.String("my-flag", "x", "a custom flag")
	cmd := framework.NewCommand(frameworktest.NewFakeProvider(frameworktest.NewFakeCloud()),
		framework.WithFlags("custom", extra),
		framework.WithControllers(framework.Controller{Name: "my-controller"}))

	if cmd.Name() != "fake-cloud-controller-manager" {
		t.Errorf("command name = %q", cmd.Name())
	}
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetArgs([]string{"--help"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	help := out.String()
	for _, want := range []string{
		"--kubeconfig", "--cloud-config", "--leader-elect", "--controllers", "--concurrent-node-syncs",
		"--concurrent-service-syncs", "--configure-cloud-routes", "--cluster-cidr", "--secure-port", "--kube-api-qps",
		"--logging-format", "-v, --v", "--cloud-api-qps", "--cloud-api-timeout", "--instance-cache-ttl", "--load-balancer-cache-ttl", "--my-flag", "my-controller",
	} {
		if !strings.Contains(help, want) {
			t.Errorf("--help lacks %q", want)
		}
	}
	if strings.Count(help, "--logging-format") != 1 {
		t.Errorf("--logging-format listed %d times", strings.Count(help, "--logging-format"))
	}
}

func TestCommandDefaults(t *testing.T) {
	cmd := framework.NewCommand(frameworktest.NewFakeProvider(frameworktest.NewFakeCloud()))
	for flag, want := range map[string]string{
		"cloud-provider":           "fake",
		"concurrent-node-syncs":    "10",
		"concurrent-service-syncs": "5",
		"kube-api-qps":             "100",
		"kube-api-burst":           "200",
		"instance-cache-ttl":       "30s",
		"load-balancer-cache-ttl":  "30s",
		"cloud-api-timeout":        "0s",
		"cloud-init-timeout":       "1m0s",
		"instance-lookup-timeout":  "1m0s",
	} {
		f := cmd.Flags().Lookup(flag)
		if f == nil {
			t.Errorf("no --%s flag", flag)
			continue
		}
		if f.DefValue != want {
			t.Errorf("--%s defaults to %q, want %q", flag, f.DefValue, want)
		}
	}
}

func TestRegistryLookup(t *testing.T) {
	reg := framework.Registry{frameworktest.NewFakeProvider(frameworktest.NewFakeCloud())}
	if p, err := reg.Lookup("fake"); err != nil || p.Name() != "fake" {
		t.Fatalf("Lookup(fake) = %v, %v", p, err)
	}
	_, err := reg.Lookup("nope")
	if err == nil || !strings.Contains(err.Error(), `--cloud-provider="nope"`) || !strings.Contains(err.Error(), "fake") {
		t.Fatalf("Lookup(nope) error = %v; want one naming the flag and the choices", err)
	}
	if got := reg.NewCommand().Name(); got != "cloud-controller-manager" {
		t.Errorf("registry command name = %q", got)
	}
}

var registerUpstreamOnce sync.Once

// RegisterUpstream lets code that initializes clouds by name through the
// upstream registry (k8s.io/cloud-provider/app/testing, for one) get ours.
func TestRegistryRegisterUpstream(t *testing.T) {
	// The upstream registry is the process's and exits on a second
	// registration of a name: once, so that -count=N runs the test N times.
	registerUpstreamOnce.Do(framework.Registry{frameworktest.NewFakeProvider(frameworktest.NewFakeCloud())}.RegisterUpstream)
	cloud, err := cloudprovider.InitCloudProvider("fake", "")
	if err != nil {
		t.Fatal(err)
	}
	if cloud == nil || cloud.ProviderName() != "fake" {
		t.Fatalf("InitCloudProvider(fake) = %v", cloud)
	}
	if _, ok := cloud.InstancesV2(); !ok {
		t.Error("the upstream-initialized cloud has no InstancesV2")
	}
}

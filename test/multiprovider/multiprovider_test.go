// Package multiprovider holds the test of a custom CCM that links several
// providers in one process (framework.Registry): no provider may change
// what another relies on.
package multiprovider

import (
	"context"
	"encoding/pem"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/klog/v2/ktesting"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/framework/cloudapi"
	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
	"github.com/ccmkit/ccmkit/providers/openstack"
	"github.com/ccmkit/ccmkit/providers/openstack/openstacksim"
	"github.com/ccmkit/ccmkit/providers/rancher"
	"github.com/ccmkit/ccmkit/providers/rancher/ranchersim"
)

// TestRancherBesideOpenStackWithACustomCA: one process holds a Rancher
// provider and an OpenStack provider whose Keystone and services are
// served over TLS by a private CA ([Global] ca-file), both started from a
// Registry as a custom CCM starts the one --cloud-provider names, Rancher
// first. OpenStack's TLS settings hold (its lookups succeed through the
// CA, which only the provider's own transport trusts), a Rancher call
// ends at its caller's deadline against a hung API, and
// http.DefaultTransport is the one the process started with.
func TestRancherBesideOpenStackWithACustomCA(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	defaultTransport := http.DefaultTransport
	reg := framework.Registry{rancher.New(), openstack.New()}

	rsim := ranchersim.NewServer(t, ranchersim.Options{})
	hostUUID := rsim.Cloud().AddInstance("rancher-node")
	rcloud := start(ctx, t, reg, "rancher", rsim.Env(rsim.URL()), "")

	osim := openstacksim.New(openstacksim.Options{})
	tlsSrv := httptest.NewTLSServer(osim.Handler())
	t.Cleanup(tlsSrv.Close)
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: tlsSrv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	serverID := osim.Cloud().AddInstance("openstack-node")
	conf := osim.CloudConfigFor(tlsSrv.URL)
	conf = conf[:len("[Global]\n")] + "ca-file = " + caFile + "\n" + conf[len("[Global]\n"):]
	ocloud := start(ctx, t, reg, "openstack", nil, conf)

	if _, err := instances(t, ocloud).InstanceByID(ctx, serverID); err != nil {
		t.Errorf("OpenStack lookup through its private CA, beside Rancher: %v", err)
	}
	if _, err := instances(t, rcloud).InstanceByID(ctx, hostUUID); err != nil {
		t.Errorf("Rancher lookup: %v", err)
	}

	defer rsim.Inject(simkit.Fault{Delay: time.Hour})()
	callCtx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	began := time.Now()
	_, err := instances(t, rcloud).InstanceByID(callCtx, hostUUID)
	if err == nil || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Rancher lookup against a hung API with a 300ms deadline: %v; want the deadline's error", err)
	}
	if took := time.Since(began); took > 3*time.Second {
		t.Errorf("Rancher lookup took %s past its 300ms deadline", took)
	}

	if http.DefaultTransport != defaultTransport {
		t.Errorf("http.DefaultTransport was replaced by a %T", http.DefaultTransport)
	}
}

// start initializes the provider reg names, as framework.Main does for
// --cloud-provider=name, with env and the cloud config conf ("" for none).
func start(ctx context.Context, t *testing.T, reg framework.Registry, name string, env map[string]string, conf string) *framework.Cloud {
	t.Helper()
	p, err := reg.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	e := &framework.Env{ClusterName: "multi", InstanceCacheTTL: -1,
		CloudAPI:  cloudapi.Options{MaxRetries: -1, Timeout: 5 * time.Second},
		LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }}
	if conf != "" {
		e.CloudConfigFile = filepath.Join(t.TempDir(), "cloud.conf")
		if err := os.WriteFile(e.CloudConfigFile, []byte(conf), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cloud, err := framework.NewCloud(ctx, p, e)
	if err != nil {
		t.Fatalf("starting %s: %v", name, err)
	}
	return cloud
}

func instances(t *testing.T, c *framework.Cloud) framework.Instances {
	t.Helper()
	ip, ok := c.Provider().(framework.InstancesProvider)
	if !ok {
		t.Fatalf("%s has no instances", c.Provider().Name())
	}
	return ip.Instances()
}

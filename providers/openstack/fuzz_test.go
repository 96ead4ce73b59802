package openstack

import (
	"testing"

	"github.com/ccmkit/ccmkit/framework/frameworktest/fuzzkit"
)

// fuzzCloudConf is the shipped secret.example.yaml's cloud.conf, filled
// in (internal/cloud's fuzz tests start from it too).
const fuzzCloudConf = "internal/cloud/testdata/fuzz-cloud.conf"

// FuzzAnnotations decodes fuzzed Service annotations ("key=value" lines
// relative to the prefix; "#n" is the n-th key) over the [LoadBalancer]
// defaults, as the load-balancer pipeline does, for the amphora and ovn
// providers: decoding keeps its promises (fuzzkit.Decode), every check's
// errors name an annotation or the Service field, and a Service that
// passes them becomes a listener tree without an error or a panic.
func FuzzAnnotations(f *testing.F) {
	defaults := defaultLBSection(f)
	nodes := fuzzkit.Nodes(func(id string) string { return Codec.Format("0000-" + id) })
	newConfig := func() *LoadBalancerConfig { return newLBConfig(&defaults.LoadBalancer) }
	fuzzkit.FuzzAnnotations[LoadBalancerConfig](f, AnnotationPrefix, []string{
		"lb-method=LEAST_CONNECTIONS\nproxy-protocol=v2\nconnection-limit=1000",
		"x-forwarded-for=true\ndefault-tls-container-ref=https://barbican/v1/containers/c1\ntimeout-client-data=50000",
		"class=internal\nsubnet-id=6b1e0f0c-0000-0000-0000-000000000009\nkeep-floatingip=true",
		"class=missing\nfloating-subnet-tags=a,b\nfloating-subnet=public-*",
		"service.beta.kubernetes.io/openstack-internal-load-balancer=true\nload-balancer-address=10.0.0.5\nhostname=lb.example.com",
		"enable-health-monitor=true\nhealth-monitor-delay=10s\nhealth-monitor-timeout=20s\nhealth-monitor-max-retries=11\nhealth-monitor-max-retries-down=0",
		"node-selector=env=prod,tier\nmember-subnet-id=m1\nport-id=p1\nnetwork-id=n1",
		"node-selector==x\nflavor-id=f\navailability-zone=az1\nlb-method=source_ip_port",
		"load-balancer-id=0a1b2c3d-0000-0000-0000-000000000001\ntimeout-member-connect=-1\ntimeout-tcp-inspect=x",
	}, func(t *testing.T, ann map[string]string, shape uint8) {
		cfg, ok := fuzzkit.Valid(t, AnnotationPrefix, newConfig, ann, "openstack-internal-load-balancer")
		svc := fuzzkit.Service(shape, ann)
		req := &lbRequest{ClusterName: "kubernetes", Service: svc, Nodes: nodes, Name: loadBalancerName("kubernetes", svc, cfg), Config: cfg}
		for _, provider := range []string{"amphora", "ovn"} {
			d := &lbDriver{cfg: &defaults.LoadBalancer, classes: defaults.LoadBalancerClass, features: featuresFor(27, provider)}
			serr := fuzzkit.Stable(t, func() error { return d.Validate(req) })
			fuzzkit.NamesAnnotation(t, serr, AnnotationPrefix, "spec.", "[LoadBalancer]")
			if !ok || serr != nil {
				continue
			}
			s, err := d.settings(req)
			if err != nil {
				t.Fatalf("settings fails after Validate passed: %v", err)
			}
			in := treeInput{cfg: s, lbName: req.Name, features: d.features, ipv6: preferIPv6(svc), memberSubnetID: "m", createMonitor: true}
			for _, n := range nodes {
				in.nodes = append(in.nodes, nodeAddrs{name: n.Name, addrs: n.Status.Addresses})
			}
			if _, err := desiredListeners(svc, in); err != nil {
				t.Errorf("desiredListeners fails on a Service that passed Validate: %v", err)
			}
		}
	})
}

// defaultLBSection is the Config fuzzCloudConf loads.
func defaultLBSection(f *testing.F) *Config {
	cfg, err := fuzzkit.Load[Config](f, nil, fuzzCloudConf, INI)
	if err != nil {
		f.Fatal(err)
	}
	return cfg
}

// FuzzProviderID parses fuzzed providerIDs with OCCM's codec, unregional
// and with a configured region.
func FuzzProviderID(f *testing.F) {
	for _, s := range []string{"openstack:///8c8f5a6e-0c4a-4e55-9a48-2b3b6f3d6a1e", "openstack://RegionOne/8c8f5a6e", "openstack://RegionTwo/x", "openstack://", "OpenStack:///x", "openstack:////x"} {
		f.Add(s)
	}
	regional := Codec
	regional.Region = "RegionOne"
	f.Fuzz(func(t *testing.T, s string) {
		fuzzkit.ProviderID(t, Codec, s)
		fuzzkit.ProviderID(t, regional, s)
	})
}

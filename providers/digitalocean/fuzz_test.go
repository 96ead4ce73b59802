package digitalocean

import (
	"testing"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/framework/frameworktest/fuzzkit"
)

// FuzzAnnotations decodes fuzzed Service annotations ("key=value" lines
// relative to the prefix; "#n" is the n-th key) as the load-balancer
// pipeline does, for both default load balancer types: decoding keeps its
// promises (fuzzkit.Decode), Validate's errors name an annotation, and a
// Service that passes every check becomes a load balancer request without
// a panic.
func FuzzAnnotations(f *testing.F) {
	nodes := fuzzkit.Nodes(framework.Codec(New()).Format)
	fuzzkit.FuzzAnnotations[LoadBalancerConfig](f, AnnotationPrefix, []string{
		"protocol=http\ntls-ports=443\ncertificate-id=29333fdc-733d-4523-8d79-31acc7e3d8f6\ntype=REGIONAL",
		"protocol=https\nhttp2-ports=443,8443\ntls-passthrough=true\nredirect-http-to-https=true\ntype=REGIONAL",
		"http3-port=443\ncertificate-name=web-cert\nhttp-ports=80,443\ntype=REGIONAL",
		"sticky-sessions-type=cookies\nsticky-sessions-cookie-name=DO-LB\nsticky-sessions-cookie-ttl=300",
		"size-slug=lb-small\nsize-unit=3\nalgorithm=least_connections\ntype=regional",
		"enable-proxy-protocol=true\nenable-backend-keepalive=true\nhttp-idle-timeout-seconds=600",
		"allow-rules=ip:1.2.3.4,cidr:10.0.0.0/8\ndeny-rules=cidr:2001:db8::/32,ip:nonsense",
		"healthcheck-protocol=http\nhealthcheck-port=10256\nhealthcheck-path=/healthz\nhealthcheck-check-interval-seconds=3",
		"healthcheck-response-timeout-seconds=301\nhealthcheck-unhealthy-threshold=1\nhealthcheck-healthy-threshold=11\noverride-health-check=true",
		"name=my-lb.example\nhostname=lb.example.com\nip=203.0.113.9\nnetwork=INTERNAL\nnetwork-stack=DUALSTACK",
		"kubernetes.digitalocean.com/load-balancer-id=4de7ac8b-495b-4884-9a69-1050c6793cd6\nservice.kubernetes.io/do-loadbalancer-disown=true",
		"subnet-uuid=x\ndisable-lets-encrypt-dns-records=maybe\ntype=GLOBAL\nhealthcheck-path=healthz",
	}, func(t *testing.T, ann map[string]string, shape uint8) {
		for _, lbType := range []string{LoadBalancerTypeRegionalNetwork, LoadBalancerTypeRegional} {
			newConfig := func() *LoadBalancerConfig { return &LoadBalancerConfig{Type: lbType} }
			cfg, ok := fuzzkit.Valid(t, AnnotationPrefix, newConfig, ann)
			req := &lbRequest{ClusterName: "kubernetes", Service: fuzzkit.Service(shape, ann), Nodes: nodes, Name: "a8a6e5e0c6a8f4b8e9d6c2f0a3c1b7e1", Config: cfg}
			if !ok || fuzzkit.Stable(t, func() error { return validateService(req) }) != nil {
				continue
			}
			// The pipeline resolves certificate-name to an ID before
			// desiredRequest; a name stands for one that resolved.
			cert := cfg.CertificateID
			if cfg.CertificateName != "" {
				cert = "29333fdc-733d-4523-8d79-31acc7e3d8f6"
			}
			s := lbSettings{region: "nyc3", clusterID: "c1", certificateID: cert, codec: framework.Codec(New())}
			if _, err := desiredRequest(t.Context(), req, s, nil); err != nil {
				t.Errorf("desiredRequest fails on a Service that passed validateService: %v", err)
			}
		}
	})
}

// FuzzConfig loads the provider's Config from a fuzzed environment
// ("NAME=value" lines; "#n" is the n-th variable): never a panic, the
// same outcome twice, no error holding the token.
func FuzzConfig(f *testing.F) {
	// The override URL may carry user:password, which no error shows.
	fuzzkit.FuzzConfig[Config](f, []string{"DO_OVERRIDE_URL"},
		"DO_ACCESS_TOKEN=dop_v1_0123456789abcdef\nREGION=nyc3",
		"DO_ACCESS_TOKEN=t\nDO_OVERRIDE_URL=http://user:pa55word@127.0.0.1:1234/\nDO_API_RATE_LIMIT_QPS=-1",
		"DO_ACCESS_TOKEN=t\nDEFAULT_LB_TYPE=regional\nPUBLIC_ACCESS_FIREWALL_NAME=fw\nPUBLIC_ACCESS_FIREWALL_TAGS=k8s,web",
		"DO_ACCESS_TOKEN=t\nDO_OVERRIDE_URL=::not a url\nDEFAULT_LB_TYPE=GLOBAL\nPUBLIC_ACCESS_FIREWALL_TAGS=x",
		"DO_CLUSTER_ID=c\nDO_CLUSTER_VPC_ID=v\nDO_API_RATE_LIMIT_QPS=NaN",
		"#0=x\n#5=\xff\n#9=",
		"DO_ACCESS_TOKEN=t\nDO_OVERRIDE_URL=ops:pa55word-z@api.example.com/v2",
	)
}

// FuzzProviderID parses fuzzed providerIDs with the provider's codec.
func FuzzProviderID(f *testing.F) {
	for _, s := range []string{"digitalocean://123", "digitalocean://", "DigitalOcean://123", "digitalocean:///42", "digitalocean://nyc3/42", "openstack:///1", "123"} {
		f.Add(s)
	}
	codec := framework.Codec(New())
	f.Fuzz(func(t *testing.T, s string) { fuzzkit.ProviderID(t, codec, s) })
}

package triton

import (
	"strings"
	"testing"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/framework/frameworktest/fuzzkit"
)

// FuzzAnnotations decodes fuzzed Service annotations ("key=value" lines
// relative to the prefix; "#n" is the n-th key) as the load-balancer
// pipeline does, for each cluster-wide mode: decoding keeps its promises
// (fuzzkit.Decode), Validate's errors name an annotation, and a Service
// that passes every check becomes Moirai metadata and firewall rules
// without a panic.
func FuzzAnnotations(f *testing.F) {
	fuzzkit.FuzzAnnotations[LoadBalancerConfig](f, AnnotationPrefix, []string{
		"mode=moirai\nlistener-type=https-http\ncertificate-name=www.example.com,example.com",
		"listener-type=tcp-proxy-v2\nmax-backends=64\nmetrics-acl=10.0.0.0/8,192.168.1.1",
		"timeout-connect=5s\ntimeout-client=55000\ntimeout-server=2m\ntimeout-queue=61m",
		"mode=cns\ncertificate-name=x\nmax-backends=32\npackage=g4-highcpu-1G\ntimeout-client=1",
		"id=cns:web\nmode=CNS",
		"id=6e4b3b0a-1d8c-4c1e-9f2a-5d7f0e2c9b31\nmax-backends=1025\nmetrics-acl=::/0,nonsense",
		"certificate-name=-bad-.example.com,UPPER.example.com\nlistener-type=quic",
	}, func(t *testing.T, ann map[string]string, shape uint8) {
		for _, mode := range []string{modeMoirai, modeCNS} {
			newConfig := func() *LoadBalancerConfig { return &LoadBalancerConfig{Mode: mode} }
			cfg, ok := fuzzkit.Valid(t, AnnotationPrefix, newConfig, ann)
			svc := fuzzkit.Service(shape, ann)
			req := &lbRequest{ClusterName: "kubernetes", Service: svc, Config: cfg, Name: "a8a6e5e0c6a8f4b8e9d6c2f0a3c1b7e1"}
			if !ok || fuzzkit.Stable(t, func() error { return validateService(req) }) != nil || cfg.Mode != modeMoirai {
				continue
			}
			desiredMetadata(req, moiraiTarget{backend: "nodes.svc.6e4b3b0a.us-east-1.cns.example.com", nodes: 3, proxyHealth: 10256})
			desiredRules(svc, cfg, "6e4b3b0a-1d8c-4c1e-9f2a-5d7f0e2c9b31")
		}
	})
}

// FuzzConfig loads the provider's Config from a fuzzed environment
// ("NAME=value" lines; "#n" is the n-th variable): never a panic, the
// same outcome twice, no error holding the key material or the URL's
// password.
func FuzzConfig(f *testing.F) {
	fuzzkit.FuzzConfig[Config](f, []string{"TRITON_URL", "SDC_URL"},
		"TRITON_URL=https://us-east-1.api.example.com\nTRITON_ACCOUNT=ops\nTRITON_KEY_ID=SHA256:abc\nTRITON_KEY_MATERIAL=-----BEGIN OPENSSH PRIVATE KEY-----",
		"SDC_URL=https://u:pa55word-x@cloudapi.example.com/?q\nSDC_ACCOUNT=ops\nSDC_KEY_MATERIAL=~/.ssh/id_rsa\nTRITON_REGION=us-east",
		"TRITON_URL=ftp://x\nTRITON_SKIP_TLS_VERIFY=maybe\nTRITON_LB_MODE=bogus",
		"#0=x\n#5=\xff\n#11=\n#20=-1\n#30=1x",
		"TRITON_URL=ops:pa55word-z@cloudapi.example.com\nTRITON_ACCOUNT=ops",
	)
}

// FuzzProviderID parses fuzzed providerIDs with the provider's codec, and
// fuzzed datacenter names with regionOf (never a panic; the region is a
// prefix of the name).
func FuzzProviderID(f *testing.F) {
	for _, s := range []string{"triton://6e4b3b0a-1d8c-4c1e-9f2a-5d7f0e2c9b31", "joyent://6e4b3b0a-1d8c-4c1e-9f2a-5d7f0e2c9b31", "Joyent:///x", "triton://", "us-east-3b", "coal", "eu-central-1a"} {
		f.Add(s)
	}
	codec := framework.Codec(New())
	f.Fuzz(func(t *testing.T, s string) {
		fuzzkit.ProviderID(t, codec, s)
		if r := (&Config{}).regionOf(s); !strings.HasPrefix(s, r) {
			t.Errorf("regionOf(%q) = %q, not a prefix of the datacenter name", s, r)
		}
	})
}

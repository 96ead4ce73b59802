package brightbox

import (
	"testing"

	brightbox "github.com/brightbox/gobrightbox/v2"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/framework/frameworktest/fuzzkit"
)

// FuzzAnnotations decodes fuzzed Service annotations ("key=value" lines
// relative to the prefix; "#n" is the n-th key) as the load-balancer
// pipeline does: decoding keeps its promises (fuzzkit.Decode), Validate's
// errors name an annotation, and a Service that passes every check becomes
// load balancer options without an error or a panic.
func FuzzAnnotations(f *testing.F) {
	codec := framework.Codec(New())
	nodes := fuzzkit.Nodes(func(id string) string { return codec.Format("srv-a" + id) })
	cip := &brightbox.CloudIP{ID: "cip-12345", Fqdn: "cip-12345.gb1.brightbox.com", ReverseDNS: "cip-109-107-1-1.gb1.brightbox.com"}
	fuzzkit.FuzzAnnotations[LoadBalancerConfig](f, AnnotationPrefix, []string{
		"listener-protocol=http\nssl-ports=443\nssl-domains=example.com,www.example.com",
		"policy=least-connections\nlistener-idle-timeout=60000\nlistener-proxy-protocol=v2-ssl-cn",
		"cloudip-allocations=cip-12345,cip-67890\nid=lba-12345",
		"healthcheck-healthy-threshold=3\nhealthcheck-unhealthy-threshold=3\nhealthcheck-protocol=http\nhealthcheck-request=/healthz\nhealthcheck-timeout=5000",
		"service.beta.kubernetes.io/aws-load-balancer-healthcheck-interval=5",
		"listener-protocol=tcp\nssl-ports=8443,x\nhealthcheck-request=healthz\npolicy=random",
		"listener-proxy-protocol=v9\nlistener-idle-timeout=-1\nhealthcheck-timeout=1e9",
	}, func(t *testing.T, ann map[string]string, shape uint8) {
		cfg, ok := fuzzkit.Valid[LoadBalancerConfig](t, AnnotationPrefix, nil, ann, "aws-load-balancer-healthcheck-interval")
		svc := fuzzkit.Service(shape, ann)
		req := &lbRequest{ClusterName: "kubernetes", Service: svc, Nodes: nodes, Name: loadBalancerName("kubernetes", svc, cfg), Config: cfg}
		if !ok || fuzzkit.Stable(t, func() error { return validateService(req) }) != nil {
			return
		}
		if _, err := desiredOptions(t.Context(), req, cip, codec); err != nil {
			t.Errorf("desiredOptions fails on a Service that passed validateService: %v", err)
		}
	})
}

// FuzzConfig loads the provider's Config from a fuzzed environment
// ("NAME=value" lines; "#n" is the n-th variable): never a panic, the
// same outcome twice, no error holding a credential or the API URL's
// password.
func FuzzConfig(f *testing.F) {
	fuzzkit.FuzzConfig[Config](f, []string{"BRIGHTBOX_API_URL"},
		"BRIGHTBOX_API_URL=https://api.gb1.brightbox.com\nBRIGHTBOX_CLIENT=cli-xxxxx\nBRIGHTBOX_CLIENT_SECRET=REPLACE-WITH-YOUR-CLIENT-SECRET",
		"BRIGHTBOX_USER_NAME=ops@example.com\nBRIGHTBOX_PASSWORD=hunter2-hunter2\nBRIGHTBOX_ACCOUNT=acc-12345",
		"BRIGHTBOX_USER_NAME=ops@example.com\nBRIGHTBOX_CLIENT=app-dkmch\nBRIGHTBOX_ACCOUNT=12345",
		"BRIGHTBOX_CLIENT_SECRET=s\nBRIGHTBOX_API_URL=https://u:pa55word-x@api.example.com/?q=1#f",
		"BRIGHTBOX_CLIENT=c\nBRIGHTBOX_API_URL=http://u:pa55word-y@%zz\nBRIGHTBOX_LEGACY_ADDRESSES=maybe",
		"#0=x\n#5=\xff\n#8=",
		"BRIGHTBOX_CLIENT=c\nBRIGHTBOX_API_URL=ops:pa55word-z@api.gb1.brightbox.com",
	)
}

// FuzzProviderID parses fuzzed providerIDs with the provider's codec, and
// fuzzed zone handles with regionOfZone (never a panic; a region is a
// prefix of its zone).
func FuzzProviderID(f *testing.F) {
	for _, s := range []string{"brightbox://srv-abc12", "brightbox://", "Brightbox://srv-abc12", "brightbox:///srv-abc12", "brightbox://gb1/srv-abc12", "gb1-a", "gb1s-b", "-", "srv-abc12"} {
		f.Add(s)
	}
	codec := framework.Codec(New())
	f.Fuzz(func(t *testing.T, s string) {
		fuzzkit.ProviderID(t, codec, s)
		if region, err := regionOfZone(s); err == nil && (region == "" || len(region) >= len(s) || s[:len(region)] != region) {
			t.Errorf("regionOfZone(%q) = %q, not a prefix of the zone", s, region)
		}
	})
}

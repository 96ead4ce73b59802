package skeleton

import (
	"testing"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/framework/frameworktest/fuzzkit"
)

// FuzzAnnotations decodes fuzzed Service annotations ("key=value" lines
// relative to the prefix; "#n" is the n-th key) as the load-balancer
// pipeline does: decoding keeps its promises (fuzzkit.Decode), Validate's
// errors name an annotation, and a Service that passes every check becomes
// a load balancer spec without an error or a panic. Copy it with the
// provider: only the seeds and the desired-state call are the cloud's.
func FuzzAnnotations(f *testing.F) {
	codec := framework.Codec(New())
	nodes := fuzzkit.Nodes(codec.Format)
	fuzzkit.FuzzAnnotations[LoadBalancerConfig](f, AnnotationPrefix, []string{
		"algorithm=least_connections\nproxy-protocol=true",
		"health-check-protocol=http\nhealth-check-path=/healthz\nhealth-check-interval=10s",
		"health-check-path=healthz\nhealth-check-interval=1500ms\nname=web",
		"load-balancer-id=lb-1\nalgorithm=random\nproxy-protocol=maybe",
	}, func(t *testing.T, ann map[string]string, shape uint8) {
		cfg, ok := fuzzkit.Valid[LoadBalancerConfig](t, AnnotationPrefix, nil, ann)
		svc := fuzzkit.Service(shape, ann)
		if !ok || fuzzkit.Stable(t, func() error { return validateService(svc) }) != nil {
			return
		}
		req := &lbRequest{ClusterName: "kubernetes", Service: svc, Nodes: nodes, Name: "a8a6e5e0c6a8f4b8e9d6c2f0a3c1b7e1", Config: cfg}
		if _, err := desiredSpec(t.Context(), req, codec, nil); err != nil {
			t.Errorf("desiredSpec fails on a Service that passed validateService: %v", err)
		}
	})
}

// FuzzConfig loads the provider's Config from a fuzzed environment
// ("NAME=value" lines; "#n" is the n-th variable): never a panic, the
// same outcome twice, no error holding the token or the URL's password.
func FuzzConfig(f *testing.F) {
	fuzzkit.FuzzConfig[Config](f, []string{"SKELETON_API_URL"},
		"SKELETON_API_URL=https://api.skeleton.example\nSKELETON_TOKEN=REPLACE-WITH-YOUR-TOKEN",
		"SKELETON_API_URL=https://u:pa55word-x@api.skeleton.example/\nSKELETON_API_QPS=-1",
		"SKELETON_API_URL=::x\nSKELETON_API_QPS=NaN\n#2=",
		"SKELETON_API_URL=ops:pa55word-z@api.skeleton.example\nSKELETON_TOKEN=t",
	)
}

// FuzzProviderID parses fuzzed providerIDs with the provider's codec.
func FuzzProviderID(f *testing.F) {
	for _, s := range []string{"skeleton://i-123", "skeleton://", "Skeleton:///i-123", "skeleton://r/i-123"} {
		f.Add(s)
	}
	codec := framework.Codec(New())
	f.Fuzz(func(t *testing.T, s string) { fuzzkit.ProviderID(t, codec, s) })
}

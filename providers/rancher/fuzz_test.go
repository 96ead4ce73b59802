package rancher

import (
	"testing"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/framework/frameworktest/fuzzkit"
)

// FuzzAnnotations decodes fuzzed Service annotations ("key=value" lines
// relative to the prefix; "#n" is the n-th key) as the load-balancer
// pipeline does, with RANCHER_LB_GLOBAL off and on: decoding keeps its
// promises (fuzzkit.Decode), every check's errors name an annotation or
// the Service field, and a Service that passes them becomes a desired load
// balancer without an error or a panic.
func FuzzAnnotations(f *testing.F) {
	nodes := fuzzkit.Nodes(framework.Codec(New()).Format)
	hostIPs := map[string]string{"1003": "10.42.0.3"}
	fuzzkit.FuzzAnnotations[LoadBalancerConfig](f, AnnotationPrefix, []string{
		"protocol=http\nstickiness-cookie=LB\nstickiness-mode=rewrite",
		"port-protocols=443=https,http=http\ncertificate-ids=1c5,1c6",
		"protocol=sni\ncertificate-ids=1c5\nimage=rancher/lb-service-haproxy:v0.9.14",
		"global=true\nscale=3",
		"scale=0\nhealthcheck-interval=99\nhealthcheck-response-timeout=3600001\nhealthcheck-healthy-threshold=0\nhealthcheck-unhealthy-threshold=101",
		"id=1s12\nport-protocols=8080=udp,nope\nstickiness-cookie=x",
		"protocol=tls\nport-protocols=dns=tcp,53=https",
		"port-protocols=1=x,2=y,3=z",
		"port-protocols=81=http,82=https,83=tcp",
	}, func(t *testing.T, ann map[string]string, shape uint8) {
		for _, global := range []bool{false, true} {
			settings := &LoadBalancerSettings{Global: global}
			cfg, ok := fuzzkit.Valid(t, AnnotationPrefix, settings.newConfig, ann, "RANCHER_LB_GLOBAL")
			svc := fuzzkit.Service(shape, ann)
			req := &lbRequest{ClusterName: "kubernetes", Service: svc, Nodes: nodes, Name: loadBalancerName("kubernetes", svc, cfg), Config: cfg}
			serr := fuzzkit.Stable(t, func() error { return validateService(req) })
			fuzzkit.NamesAnnotation(t, serr, AnnotationPrefix, "spec.")
			if !ok || serr != nil {
				continue
			}
			if _, err := desired(t.Context(), req, "rancher/lb-service-haproxy:v0.9.14", hostIPs); err != nil {
				t.Errorf("desired fails on a Service that passed validateService: %v", err)
			}
		}
	})
}

// FuzzConfig loads the provider's Config from a fuzzed environment
// ("NAME=value" lines; "#n" is the n-th variable): never a panic, the
// same outcome twice, no error holding a key or the URL's password.
func FuzzConfig(f *testing.F) {
	fuzzkit.FuzzConfig[Config](f, []string{"CATTLE_URL"},
		"CATTLE_URL=http://rancher.example.com:8080/v2-beta/projects/1a5\nCATTLE_ACCESS_KEY=REPLACE-WITH-THE-ACCESS-KEY\nCATTLE_SECRET_KEY=REPLACE-WITH-THE-SECRET-KEY",
		"CATTLE_URL=http://ak:sk-pa55word@rancher.example.com:8080/v2-beta\nCATTLE_ACCESS_KEY=a",
		"CATTLE_URL=rancher.example.com\nRANCHER_ZONE_LABELS=,\nRANCHER_LB_GLOBAL=maybe\nRANCHER_DEFAULT_INSTANCE_TYPE=",
		"#0=x\n#3=\xff\n#9=\n#12=-1",
		"CATTLE_URL=ak:pa55word-z@rancher.example.com:8080/v2-beta",
	)
}

// FuzzProviderID parses fuzzed providerIDs with the provider's codec.
func FuzzProviderID(f *testing.F) {
	for _, s := range []string{"rancher://1h5", "rancher://0f2c5a4e-8d1b-4c3a-9e7f-6b5d4c3b2a19", "Rancher:///1h5", "rancher://", "rancher://env/1h5"} {
		f.Add(s)
	}
	codec := framework.Codec(New())
	f.Fuzz(func(t *testing.T, s string) { fuzzkit.ProviderID(t, codec, s) })
}

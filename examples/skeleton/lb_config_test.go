package skeleton

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ccmkit/ccmkit/framework/annotations"
)

func TestLoadBalancerConfig(t *testing.T) {
	tests := []struct {
		name        string
		annotations map[string]string
		want        LoadBalancerConfig
		wantErrs    []string
		wantUnknown []string
	}{
		{
			name: "defaults",
			want: LoadBalancerConfig{Algorithm: "round_robin", HealthCheckInterval: 10 * time.Second},
		},
		{
			name: "every annotation",
			annotations: map[string]string{
				"skeleton.ccmkit.io/name":                  "web",
				"skeleton.ccmkit.io/algorithm":             "LEAST_CONNECTIONS",
				"skeleton.ccmkit.io/health-check-protocol": "http",
				"skeleton.ccmkit.io/health-check-path":     "/ready",
				"skeleton.ccmkit.io/health-check-interval": "15",
				"skeleton.ccmkit.io/proxy-protocol":        "yes",
				"skeleton.ccmkit.io/load-balancer-id":      "lb-000001",
				"skeleton.ccmkit.io/algorthm":              "typo",
			},
			want: LoadBalancerConfig{
				Name: "web", Algorithm: "least_connections", HealthCheckProtocol: "http", HealthCheckPath: "/ready",
				HealthCheckInterval: 15 * time.Second, ProxyProtocol: true, LoadBalancerID: "lb-000001",
			},
			wantUnknown: []string{"skeleton.ccmkit.io/algorthm"},
		},
		{
			name: "every error at once",
			annotations: map[string]string{
				"skeleton.ccmkit.io/algorithm":             "random",
				"skeleton.ccmkit.io/health-check-interval": "abc",
				"skeleton.ccmkit.io/proxy-protocol":        "maybe",
			},
			wantErrs: []string{"algorithm", "health-check-interval", "proxy-protocol"},
		},
		{
			name:        "path needs http",
			annotations: map[string]string{"skeleton.ccmkit.io/health-check-path": "/ready"},
			wantErrs:    []string{`needs "skeleton.ccmkit.io/health-check-protocol" set to "http"`},
		},
		{
			name:        "interval in whole seconds",
			annotations: map[string]string{"skeleton.ccmkit.io/health-check-interval": "1500ms"},
			wantErrs:    []string{"not a whole number of seconds"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var cfg LoadBalancerConfig
			res, err := annotations.Decode(tt.annotations, AnnotationPrefix, &cfg)
			if err == nil {
				err = cfg.Validate()
			}
			if len(tt.wantErrs) == 0 {
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(tt.want, cfg); diff != "" {
					t.Errorf("config (-want +got):\n%s", diff)
				}
			}
			for _, want := range tt.wantErrs {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("err = %v, want it to mention %q", err, want)
				}
			}
			if diff := cmp.Diff(tt.wantUnknown, res.Unknown); diff != "" {
				t.Errorf("unknown annotations (-want +got):\n%s", diff)
			}
		})
	}
}

// TestLoadBalancerConfigTags catches a struct tag the annotations package
// cannot honour before a user does.
func TestLoadBalancerConfigTags(t *testing.T) {
	if _, err := annotations.Fields(AnnotationPrefix, &LoadBalancerConfig{}); err != nil {
		t.Fatal(err)
	}
}

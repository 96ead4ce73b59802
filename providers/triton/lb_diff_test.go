package triton

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/joyent/triton-go/network"
)

func TestMetadataChanges(t *testing.T) {
	have := map[string]string{mdLoadBalancer: "true", mdPortmap: "tcp://80:b:30080", mdMetricsACL: "10.0.0.0/8", "cloud.tritoncompute:syslog": "h:514"}
	want := map[string]string{mdLoadBalancer: "true", mdPortmap: "tcp://80:b:31080"}
	set, del := metadataChanges(have, want)
	if diff := cmp.Diff(map[string]string{mdPortmap: "tcp://80:b:31080"}, set); diff != "" {
		t.Errorf("set (-want +got):\n%s", diff)
	}
	if !cmp.Equal(del, []string{mdMetricsACL}) {
		t.Errorf("del = %q, want the metrics ACL alone (syslog is not the CCM's)", del)
	}
	if set, del := metadataChanges(want, want); len(set)+len(del) != 0 {
		t.Errorf("the same metadata: set %v, del %v", set, del)
	}
}

func TestRuleChanges(t *testing.T) {
	have := []*network.FirewallRule{
		{ID: "r1", Rule: "FROM any TO vm m ALLOW tcp  port 80", Enabled: true},
		{ID: "r2", Rule: "FROM any TO vm m ALLOW tcp PORT 80", Enabled: true},
		{ID: "r3", Rule: "FROM subnet 10.0.0.0/8 TO vm m ALLOW tcp PORT 8405", Enabled: false},
	}
	want := []string{"FROM any TO vm m ALLOW tcp PORT 80", "FROM subnet 10.0.0.0/8 TO vm m ALLOW tcp PORT 8405"}
	create, del := ruleChanges(have, want)
	if !cmp.Equal(create, want[1:]) || !cmp.Equal(del, []string{"r2", "r3"}) {
		t.Errorf("create %q, del %q: want the disabled rule replaced and the duplicate deleted", create, del)
	}
}

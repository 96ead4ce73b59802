package triton

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestCNSLabel(t *testing.T) {
	svc := func(ns, name string) *corev1.Service {
		return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	}
	if got := cnsLabel("Prod.EU", svc("default", "web_api")); got != "k8s-prod-eu-default-web-api" {
		t.Errorf("cnsLabel = %q", got)
	}
	long := strings.Repeat("n", 60)
	a, b := cnsLabel("c", svc(long, "one")), cnsLabel("c", svc(long, "two"))
	for _, l := range []string{a, b} {
		if len(l) > 63 || !cnsLabelPattern.MatchString(l) {
			t.Errorf("label %q (%d characters) is not a CNS name", l, len(l))
		}
	}
	if a == b {
		t.Errorf("two long Services share the label %q", a)
	}
	if got := nodeServiceLabel(&LoadBalancerSettings{}, "c"); got != "k8s-c-nodes" {
		t.Errorf("nodeServiceLabel = %q", got)
	}
}

func TestCNSEntries(t *testing.T) {
	have := parseCNSServices([]string{"web:8080", " k8s-a:30080", "", "admin", "k8s-a:30443 "})
	if diff := cmp.Diff([]cnsEntry{"web:8080", "k8s-a:30080", "admin", "k8s-a:30443"}, have); diff != "" {
		t.Errorf("parse (-want +got):\n%s", diff)
	}
	for _, tc := range []struct {
		name string
		want []cnsEntry
		out  string
	}{
		{"same", cnsPortEntries("k8s-a", []int32{30443, 30080}), "web:8080,admin,k8s-a:30080,k8s-a:30443"},
		{"changed", cnsPortEntries("k8s-a", []int32{31000}), "web:8080,admin,k8s-a:31000"},
		{"removed", nil, "web:8080,admin"},
	} {
		if got := formatCNSServices(withCNSEntries(have, "k8s-a", tc.want)); got != tc.out {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.out)
		}
	}
	if !sameEntries(cnsEntriesOf(have, "k8s-a"), cnsPortEntries("k8s-a", []int32{30443, 30080})) {
		t.Error("the same entries in another order differ")
	}
	if got := formatCNSServices(withCNSEntries(nil, "k8s-a", nil)); got != "" {
		t.Errorf("nothing with nothing = %q", got)
	}
	// cnsEntriesIn reads a label's entries as parsing everything would.
	for _, value := range [][]string{
		{"web:8080", " k8s-a:30080", "", "admin", "k8s-a:30443 "},
		{"k8s-a:1,k8s-b:2, k8s-a :3", "k8s-ab:4"},
		nil,
	} {
		for _, label := range []string{"k8s-a", "web", "k8s-ab", "none"} {
			if got, want := cnsEntriesIn(value, label), cnsEntriesOf(parseCNSServices(value), label); !cmp.Equal(got, want) {
				t.Errorf("cnsEntriesIn(%q, %s) = %q, want %q", value, label, got, want)
			}
		}
	}
}

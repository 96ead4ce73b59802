package skeleton

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSpecChanges(t *testing.T) {
	have := lbSpec{
		Name: "n", Algorithm: "round_robin",
		Listeners:   []listener{{"TCP", 80, 30080}, {"UDP", 53, 30053}},
		HealthCheck: healthCheck{Protocol: "tcp", Port: 30080, IntervalSeconds: 10},
		Members:     []string{"i-1", "i-2"},
		Tags:        []string{"t"},
	}
	tests := []struct {
		name   string
		change func(*lbSpec)
		want   []string
	}{
		{"identical", func(*lbSpec) {}, nil},
		{"order does not count", func(s *lbSpec) {
			s.Listeners = []listener{{"UDP", 53, 30053}, {"TCP", 80, 30080}}
			s.Members = []string{"i-2", "i-1"}
		}, nil},
		{"node port moved", func(s *lbSpec) { s.Listeners = []listener{{"TCP", 80, 30081}, {"UDP", 53, 30053}} }, []string{"listeners"}},
		{"member joined", func(s *lbSpec) { s.Members = []string{"i-1", "i-2", "i-3"} }, []string{"members"}},
		{"everything else", func(s *lbSpec) {
			s.Name, s.Algorithm, s.ProxyProtocol = "m", "least_connections", true
			s.HealthCheck.IntervalSeconds = 20
			s.Tags = []string{"t", "u"}
		}, []string{"name", "algorithm", "health check", "proxy protocol", "tags"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := have
			want.Listeners = append([]listener(nil), have.Listeners...)
			tt.change(&want)
			if diff := cmp.Diff(tt.want, specChanges(&have, &want)); diff != "" {
				t.Errorf("specChanges (-want +got):\n%s", diff)
			}
		})
	}
	// A cloud that lists a member twice gets repaired by a PUT.
	dup := have
	dup.Members = []string{"i-1", "i-1", "i-2"}
	if got := specChanges(&dup, &have); !cmp.Equal(got, []string{"members"}) {
		t.Errorf("duplicate member in the cloud: changes = %v, want [members]", got)
	}
}

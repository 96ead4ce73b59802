package skeletonsim_test

import (
	"errors"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/ccmkit/ccmkit/examples/skeleton/skeletonsim"
	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

const fullScenario = `
provider: skeleton
description: every field
token: tok-123
seed: 7
latency: 30ms
pageSize: 20
provisioningReads: -1
instances:
- name: node-1
- name: node-2
  type: s-4
  region: sk-2
  state: stopped
  privateIPv4: 10.9.0.9
  publicIPv4: none
  publicIPv6: 2001:db8::99
- name: node-3
  zone: sk-1c
loadBalancers:
- name: web
  listeners: [{protocol: TCP, port: 80, targetPort: 30080}]
  members: [node-1, node-3]
  tags: [cluster:demo]
- name: pending
  algorithm: least_connections
  listeners: [{protocol: UDP, port: 53, targetPort: 30053}]
  healthCheck: {protocol: http, port: 30054, path: /healthz, intervalSeconds: 5}
  proxyProtocol: true
  status: provisioning
faults:
- operation: instances.list
  status: 503
  rate: 0.1
  retryAfter: 2s
- operation: "*"
  delay: 100ms
  count: 3
- operation: PUT /v1/load-balancers/{id}
  reset: true
- operation: routes.create
  status: 422
  message: quota exceeded
`

func TestLoadScenario(t *testing.T) {
	sc, err := skeletonsim.LoadScenario([]byte(fullScenario))
	if err != nil {
		t.Fatalf("LoadScenario: %v", err)
	}

	wantOpts := skeletonsim.Options{
		Token:             "tok-123",
		PerPage:           20,
		ProvisioningReads: -1,
		Common: simkit.Common{
			Seed:    7,
			Latency: 30 * time.Millisecond,
			Faults: []skeletonsim.Fault{
				{Op: "GET /v1/instances", Status: 503, Rate: 0.1, RetryAfter: 2 * time.Second},
				{Delay: 100 * time.Millisecond, Count: 3},
				{Op: "PUT /v1/load-balancers/{id}", Reset: true},
				{Op: "POST /v1/routes", Status: 422, Message: "quota exceeded"},
			},
		},
	}
	if diff := cmp.Diff(wantOpts, sc.Options(), cmpopts.IgnoreFields(simkit.Common{}, "Logger")); diff != "" {
		t.Errorf("Options (-want +got):\n%s", diff)
	}

	sim := skeletonsim.New(skeletonsim.Options{})
	sc.Apply(sim)
	want := skeletonsim.Snapshot{
		Instances: []skeletonsim.Instance{
			{ID: "i-000001", Name: "node-1", Type: "s-2", Region: "sk-1", Zone: "sk-1a", Status: "running",
				PrivateIPv4: "10.0.0.2", PublicIPv4: "203.0.113.2", PublicIPv6: "2001:db8::2"},
			{ID: "i-000002", Name: "node-2", Type: "s-4", Region: "sk-2", Zone: "sk-2a", Status: "stopped",
				PrivateIPv4: "10.9.0.9", PublicIPv6: "2001:db8::99"},
			{ID: "i-000003", Name: "node-3", Type: "s-2", Region: "sk-1", Zone: "sk-1c", Status: "running",
				PrivateIPv4: "10.0.0.4", PublicIPv4: "203.0.113.4", PublicIPv6: "2001:db8::4"},
		},
		LoadBalancers: []skeletonsim.LoadBalancer{
			{
				ID: "lb-000001",
				LoadBalancerSpec: skeletonsim.LoadBalancerSpec{
					Name:        "web",
					Algorithm:   "round_robin",
					Listeners:   []skeletonsim.Listener{{Protocol: "TCP", Port: 80, TargetPort: 30080}},
					HealthCheck: skeletonsim.HealthCheck{Protocol: "tcp", Port: 30080, IntervalSeconds: 10},
					Members:     []string{"i-000001", "i-000003"},
					Tags:        []string{"cluster:demo"},
				},
				Status: "active",
				IPv4:   "198.18.0.1",
			},
			{
				ID: "lb-000002",
				LoadBalancerSpec: skeletonsim.LoadBalancerSpec{
					Name:          "pending",
					Algorithm:     "least_connections",
					Listeners:     []skeletonsim.Listener{{Protocol: "UDP", Port: 53, TargetPort: 30053}},
					HealthCheck:   skeletonsim.HealthCheck{Protocol: "http", Port: 30054, Path: "/healthz", IntervalSeconds: 5},
					ProxyProtocol: true,
					Members:       []string{},
					Tags:          []string{},
				},
				Status: "provisioning",
			},
		},
		Routes: []skeletonsim.Route{},
	}
	if diff := cmp.Diff(want, sim.State()); diff != "" {
		t.Errorf("State after Apply (-want +got):\n%s", diff)
	}
}

func TestLoadScenarioEmpty(t *testing.T) {
	sc, err := skeletonsim.LoadScenario(nil)
	if err != nil {
		t.Fatalf("LoadScenario(nil): %v", err)
	}
	if diff := cmp.Diff(&skeletonsim.Scenario{}, sc); diff != "" {
		t.Errorf("empty scenario (-want +got):\n%s", diff)
	}
}

func TestExampleScenario(t *testing.T) {
	data, err := os.ReadFile("../../cloudsim/skeleton.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := skeletonsim.LoadScenario(data); err != nil {
		t.Errorf("examples/cloudsim/skeleton.yaml: %v", err)
	}
}

func TestLoadScenarioErrors(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		// want lists each problem as "field: type" for field errors, the
		// message for others.
		want []string
	}{
		{
			name: "unknown key",
			yaml: "instances:\n- name: a\n  zon: sk-1a\n",
			want: []string{`unknown field "zon"`},
		},
		{
			name: "unknown key with other problems",
			yaml: "latencyy: 30ms\npageSize: 500\n",
			want: []string{`unknown field "latencyy"`, "pageSize: Invalid value"},
		},
		{
			name: "duration without unit",
			yaml: "latency: 30\n",
			want: []string{"latency: Invalid value"},
		},
		{
			name: "negative duration",
			yaml: "latency: -1s\n",
			want: []string{"latency: Invalid value"},
		},
		{
			name: "several problems at once",
			yaml: `
provider: digitalocean
token: "two words"
latency: fast
pageSize: 201
provisioningReads: -2
instances:
- type: s-2
- name: b
  state: paused
  privateIPv4: 2001:db8::1
  publicIPv4: 300.1.2.3
  publicIPv6: 192.0.2.1
`,
			want: []string{
				"provider: Unsupported value",
				"latency: Invalid value",
				"provisioningReads: Invalid value",
				"token: Invalid value",
				"pageSize: Invalid value",
				"instances[0].name: Required value",
				"instances[1].state: Unsupported value",
				"instances[1].privateIPv4: Invalid value",
				"instances[1].publicIPv4: Invalid value",
				"instances[1].publicIPv6: Invalid value",
			},
		},
		{
			name: "faults",
			yaml: `
faults:
- status: 500
- operation: instances.destroy
  status: 500
- operation: "*"
  status: 200
- operation: "*"
- operation: "*"
  status: 500
  reset: true
- operation: "*"
  delay: 1s
  retryAfter: 2s
- operation: "*"
  delay: soon
- operation: "*"
  status: 500
  rate: -0.5
- operation: "*"
  status: 500
  rate: 1.5
  count: -1
`,
			want: []string{
				"faults[0].operation: Required value",
				"faults[1].operation: Invalid value",
				"faults[2].status: Invalid value",
				"faults[3]: Required value",
				"faults[4].reset: Forbidden",
				"faults[5].retryAfter: Forbidden",
				"faults[6].delay: Invalid value",
				"faults[7].rate: Invalid value",
				"faults[8].rate: Invalid value",
				"faults[8].count: Invalid value",
			},
		},
		{
			name: "load balancers",
			yaml: `
instances:
- name: twin
- name: twin
- name: solo
loadBalancers:
- name: lb
  listeners: [{protocol: SCTP, port: 80, targetPort: 30080}]
  members: [solo, solo, twin, ghost]
  status: deleting
  errorMessage: boom
  ipv4: 2001:db8::1
`,
			want: []string{
				"loadBalancers[0]: Invalid value",
				"loadBalancers[0].members[1]: Duplicate value",
				"loadBalancers[0].members[2]: Invalid value",
				"loadBalancers[0].members[3]: Not found",
				"loadBalancers[0].status: Unsupported value",
				"loadBalancers[0].errorMessage: Forbidden",
				"loadBalancers[0].ipv4: Invalid value",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := skeletonsim.LoadScenario([]byte(tt.yaml))
			if diff := cmp.Diff(tt.want, problems(t, err)); diff != "" {
				t.Errorf("problems (-want +got):\n%s\nerror: %v", diff, err)
			}
		})
	}
}

// problems lists the problems in a LoadScenario error as
// TestLoadScenarioErrors writes them.
func problems(t *testing.T, err error) []string {
	t.Helper()
	var agg utilerrors.Aggregate
	if !errors.As(err, &agg) {
		t.Fatalf("error %v is not an aggregate of problems", err)
	}
	var out []string
	for _, e := range agg.Errors() {
		var fe *field.Error
		if errors.As(e, &fe) {
			out = append(out, fe.Field+": "+fe.Type.String())
		} else {
			out = append(out, e.Error())
		}
	}
	return out
}

func TestLoadScenarioErrorMessage(t *testing.T) {
	_, err := skeletonsim.LoadScenario([]byte("instances:\n- name: a\n  state: paused\n  zon: x\n"))
	want := `invalid scenario: [unknown field "zon", instances[0].state: Unsupported value: "paused": supported values: "running", "stopped"]`
	if err == nil || err.Error() != want {
		t.Errorf("error = %v\nwant    %s", err, want)
	}
}

func TestLoadScenarioMalformed(t *testing.T) {
	for _, data := range []string{
		"instances: [",
		"- just a list",
		"pageSize: many",
		"latency: 1s\nlatency: 2s\n",
	} {
		_, err := skeletonsim.LoadScenario([]byte(data))
		if err == nil {
			t.Errorf("LoadScenario(%q) succeeded, want an error", data)
			continue
		}
		if !strings.Contains(err.Error(), "scenario") {
			t.Errorf("LoadScenario(%q) = %v, want it to say scenario", data, err)
		}
	}
}

func TestScenarioFaultsApply(t *testing.T) {
	sc, err := skeletonsim.LoadScenario([]byte(`
faults:
- operation: instances.list
  status: 429
  retryAfter: 1500ms
  count: 1
- operation: POST /v1/routes
  status: 503
`))
	if err != nil {
		t.Fatal(err)
	}
	sim := skeletonsim.NewServer(t, sc.Options())
	c := newClient(t, sim)

	first := c.do("GET", "/v1/instances", nil)
	if first.status != http.StatusTooManyRequests || first.header.Get("Retry-After") != "2" {
		t.Errorf("first list: %d, Retry-After %q; want 429, 2", first.status, first.header.Get("Retry-After"))
	}
	if got := c.do("GET", "/v1/instances", nil).status; got != http.StatusOK {
		t.Errorf("second list: %d, want 200 (count: 1)", got)
	}
	if got := c.do("POST", "/v1/routes", map[string]any{}).status; got != http.StatusServiceUnavailable {
		t.Errorf("create route: %d, want 503", got)
	}
}

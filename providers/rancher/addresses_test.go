package rancher

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	rancher "github.com/rancher/go-rancher/v2"
	corev1 "k8s.io/api/core/v1"
)

func ips(addrs ...string) []rancher.IpAddress {
	out := make([]rancher.IpAddress, len(addrs))
	for i, a := range addrs {
		out[i] = rancher.IpAddress{Address: a}
	}
	return out
}

func TestNodeAddresses(t *testing.T) {
	const label = "io.rancher.host.external_dns_ip"
	in := func(a string) corev1.NodeAddress { return corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: a} }
	ex := func(a string) corev1.NodeAddress { return corev1.NodeAddress{Type: corev1.NodeExternalIP, Address: a} }
	hn := func(a string) corev1.NodeAddress { return corev1.NodeAddress{Type: corev1.NodeHostName, Address: a} }
	tests := []struct {
		name    string
		host    rancher.Host
		ips     []rancher.IpAddress
		want    []corev1.NodeAddress
		wantErr bool
	}{{
		name: "agent IP only",
		host: rancher.Host{Hostname: "node-1", AgentIpAddress: "10.0.0.5"},
		ips:  ips("10.0.0.5"),
		want: []corev1.NodeAddress{in("10.0.0.5"), hn("node-1")},
	}, {
		name: "agent IP first, private and public split, never both",
		host: rancher.Host{Hostname: "node-1", AgentIpAddress: "10.0.0.5"},
		ips:  ips("203.0.113.7", "192.168.1.4", "10.0.0.5", "100.64.3.2", "fd00::5", "2001:db8::5"),
		want: []corev1.NodeAddress{
			in("10.0.0.5"), in("192.168.1.4"), in("100.64.3.2"), in("fd00::5"),
			ex("203.0.113.7"), ex("2001:db8::5"), hn("node-1"),
		},
	}, {
		name: "a public agent IP is the InternalIP",
		host: rancher.Host{Hostname: "node-1", AgentIpAddress: "198.51.100.9"},
		ips:  ips("198.51.100.9"),
		want: []corev1.NodeAddress{in("198.51.100.9"), hn("node-1")},
	}, {
		name: "loopback, link-local and unspecified are left out",
		host: rancher.Host{Hostname: "node-1", AgentIpAddress: "10.0.0.5"},
		ips:  ips("127.0.0.1", "169.254.1.1", "fe80::1", "0.0.0.0", "::"),
		want: []corev1.NodeAddress{in("10.0.0.5"), hn("node-1")},
	}, {
		name: "the external IP label, a list, even private; not the agent IP again",
		host: rancher.Host{Hostname: "node-1", AgentIpAddress: "10.0.0.5", Labels: map[string]any{label: "198.51.100.9, 172.16.0.9,10.0.0.5"}},
		ips:  ips("10.0.0.5"),
		want: []corev1.NodeAddress{in("10.0.0.5"), ex("198.51.100.9"), ex("172.16.0.9"), hn("node-1")},
	}, {
		name:    "a malformed address is reported, the others kept",
		host:    rancher.Host{Hostname: "node-1", AgentIpAddress: "10.0.0.5"},
		ips:     ips("10.0.0.300", "203.0.113.7"),
		want:    []corev1.NodeAddress{in("10.0.0.5"), ex("203.0.113.7"), hn("node-1")},
		wantErr: true,
	}, {
		name: "no agent IP: the link's addresses",
		host: rancher.Host{Hostname: "node-1"},
		ips:  ips("10.0.0.5"),
		want: []corev1.NodeAddress{in("10.0.0.5"), hn("node-1")},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := nodeAddresses(&tt.host, tt.ips, []string{label})
			if (err != nil) != tt.wantErr {
				t.Errorf("error %v, want error %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("addresses (-want +got):\n%s", diff)
			}
		})
	}
}

func TestHostTopology(t *testing.T) {
	cfg := &Config{
		ZoneLabels:          []string{"topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone"},
		RegionLabels:        []string{"topology.kubernetes.io/region"},
		InstanceTypeLabels:  []string{"node.kubernetes.io/instance-type"},
		DefaultInstanceType: "rancher",
	}
	tests := []struct {
		name string
		host rancher.Host
		want topology
	}{{
		name: "no labels, no machine driver",
		want: topology{Type: "rancher"},
	}, {
		name: "labels",
		host: rancher.Host{Labels: map[string]any{
			"topology.kubernetes.io/region": "eu-west", "topology.kubernetes.io/zone": "eu-west-a",
			"node.kubernetes.io/instance-type": "m5.large",
		}},
		want: topology{Region: "eu-west", Zone: "eu-west-a", Type: "m5.large"},
	}, {
		name: "the second zone label when the first is absent or empty",
		host: rancher.Host{Labels: map[string]any{"topology.kubernetes.io/zone": "", "failure-domain.beta.kubernetes.io/zone": "z2"}},
		want: topology{Zone: "z2", Type: "rancher"},
	}, {
		name: "amazonec2 machine",
		host: rancher.Host{Amazonec2Config: &rancher.Amazonec2Config{Region: "us-east-1", Zone: "b", InstanceType: "t3.medium"}},
		want: topology{Region: "us-east-1", Zone: "us-east-1b", Type: "t3.medium"},
	}, {
		name: "labels win over the machine driver",
		host: rancher.Host{
			Labels:             map[string]any{"node.kubernetes.io/instance-type": "big"},
			DigitaloceanConfig: &rancher.DigitaloceanConfig{Region: "ams3", Size: "s-2vcpu-4gb"},
		},
		want: topology{Region: "ams3", Type: "big"},
	}, {
		name: "a value that cannot be a label value is passed over",
		host: rancher.Host{
			Labels:          map[string]any{"topology.kubernetes.io/zone": "zone a", "failure-domain.beta.kubernetes.io/zone": "zone-a"},
			Amazonec2Config: &rancher.Amazonec2Config{InstanceType: "not/valid"},
		},
		want: topology{Zone: "zone-a", Type: "rancher"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, _ := hostTopology(&tt.host, cfg); got != tt.want {
				t.Errorf("hostTopology = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestSameHost(t *testing.T) {
	for _, tt := range []struct {
		node, host string
		want       bool
	}{
		{"node-1", "node-1", true},
		{"node-1", "Node-1", true},
		{"node-1", "node-1.example.com", true},
		{"node-1.example.com", "NODE-1", true},
		{"node-1.example.com", "node-1.example.org", false}, // both qualified: whole names
		{"node-1", "node-10", false},
		{"node-1", "", false},
	} {
		if got := sameHost(tt.node, tt.host); got != tt.want {
			t.Errorf("sameHost(%q, %q) = %v, want %v", tt.node, tt.host, got, tt.want)
		}
	}
}

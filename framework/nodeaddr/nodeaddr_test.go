package nodeaddr

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

func TestParseFamily(t *testing.T) {
	tests := []struct {
		in      string
		want    Family
		wantErr bool
	}{
		{in: "", want: DualStack},
		{in: "ipv4", want: IPv4},
		{in: "IPv4", want: IPv4},
		{in: "ipv6", want: IPv6},
		{in: " IPV6 ", want: IPv6},
		{in: "dual", want: DualStack},
		{in: "dualstack", want: DualStack},
		{in: "DualStack", want: DualStack},
		{in: "dual-stack", want: DualStack},
		{in: "ipv5", wantErr: true},
		{in: "4", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseFamily(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("ParseFamily(%q) error = %v, wantErr %v", tt.in, err, tt.wantErr)
			}
			if err != nil && !strings.Contains(err.Error(), tt.in) {
				t.Errorf("error %q does not name the input %q", err, tt.in)
			}
			if got != tt.want {
				t.Errorf("ParseFamily(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// Address constructors for the expected values.
var (
	internal    = addressOf(corev1.NodeInternalIP)
	external    = addressOf(corev1.NodeExternalIP)
	internalDNS = addressOf(corev1.NodeInternalDNS)
	externalDNS = addressOf(corev1.NodeExternalDNS)
	hostname    = addressOf(corev1.NodeHostName)
)

func addressOf(t corev1.NodeAddressType) func(string) corev1.NodeAddress {
	return func(a string) corev1.NodeAddress { return corev1.NodeAddress{Type: t, Address: a} }
}

func TestBuild(t *testing.T) {
	tests := []struct {
		name    string
		family  Family
		build   func(b *Builder)
		want    []corev1.NodeAddress
		wantErr []string // substrings of the error; nil means no error
	}{
		{
			name:  "empty",
			build: func(b *Builder) {},
			want:  nil,
		},
		{
			name: "empty strings are ignored",
			build: func(b *Builder) {
				b.AddInternal("", " ").AddExternal("").AddHostname("").AddDNS(corev1.NodeExternalDNS, "")
			},
			want: nil,
		},
		{
			name:   "documented order regardless of insertion order",
			family: DualStack,
			build: func(b *Builder) {
				b.AddHostname("web-1")
				b.AddDNS(corev1.NodeExternalDNS, "web-1.example.com")
				b.AddDNS(corev1.NodeInternalDNS, "web-1.internal")
				b.AddExternal("2001:db8::1", "203.0.113.10")
				b.AddInternal("fd00::10", "10.0.0.10")
			},
			want: []corev1.NodeAddress{
				internal("10.0.0.10"),
				internal("fd00::10"),
				external("203.0.113.10"),
				external("2001:db8::1"),
				internalDNS("web-1.internal"),
				externalDNS("web-1.example.com"),
				hostname("web-1"),
			},
		},
		{
			name: "insertion order kept within type and family (primary NIC first)",
			build: func(b *Builder) {
				b.AddInternal("10.0.2.5", "fd00::2")
				b.AddInternal("10.0.1.5", "fd00::1")
				b.AddInternal("192.168.0.5")
			},
			want: []corev1.NodeAddress{
				internal("10.0.2.5"),
				internal("10.0.1.5"),
				internal("192.168.0.5"),
				internal("fd00::2"),
				internal("fd00::1"),
			},
		},
		{
			name: "duplicates removed, first occurrence kept",
			build: func(b *Builder) {
				b.AddInternal("10.0.0.1", "10.0.0.2", "10.0.0.1")
				b.AddExternal("203.0.113.1", "203.0.113.1")
				b.AddHostname("web-1").AddHostname("web-1")
				b.AddInternal("10.0.0.2")
			},
			want: []corev1.NodeAddress{
				internal("10.0.0.1"),
				internal("10.0.0.2"),
				external("203.0.113.1"),
				hostname("web-1"),
			},
		},
		{
			name: "same IP internal and external keeps both types",
			build: func(b *Builder) {
				b.AddExternal("198.51.100.7")
				b.AddInternal("198.51.100.7")
			},
			want: []corev1.NodeAddress{
				internal("198.51.100.7"),
				external("198.51.100.7"),
			},
		},
		{
			name: "canonical form",
			build: func(b *Builder) {
				b.AddInternal("2001:0DB8:0000:0000:0000:0000:0000:0001", " 10.0.0.1 ")
				b.AddExternal("::ffff:203.0.113.9", "::FFFF:cb00:7109")
			},
			want: []corev1.NodeAddress{
				internal("10.0.0.1"),
				internal("2001:db8::1"),
				external("203.0.113.9"),
			},
		},
		{
			name: "duplicates detected after canonicalisation",
			build: func(b *Builder) {
				b.AddInternal("fd00:0::1", "FD00::1", "fd00::0:1")
			},
			want: []corev1.NodeAddress{internal("fd00::1")},
		},
		{
			name:   "ipv4 only drops IPv6",
			family: IPv4,
			build: func(b *Builder) {
				b.AddInternal("10.0.0.1", "fd00::1").AddExternal("2001:db8::1", "203.0.113.1").AddHostname("web-1")
			},
			want: []corev1.NodeAddress{
				internal("10.0.0.1"),
				external("203.0.113.1"),
				hostname("web-1"),
			},
		},
		{
			name:   "ipv6 only drops IPv4",
			family: IPv6,
			build: func(b *Builder) {
				b.AddInternal("10.0.0.1", "fd00::1").AddExternal("2001:db8::1", "203.0.113.1").AddHostname("web-1")
			},
			want: []corev1.NodeAddress{
				internal("fd00::1"),
				external("2001:db8::1"),
				hostname("web-1"),
			},
		},
		{
			name:   "ipv6 only treats mapped IPv4 as IPv4",
			family: IPv6,
			build:  func(b *Builder) { b.AddInternal("::ffff:10.0.0.1") },
			want:   nil,
		},
		{
			name: "invalid IPs reported, valid ones kept",
			build: func(b *Builder) {
				b.AddInternal("10.0.0.1", "10.0.0.256", "not-an-ip")
				b.AddExternal("203.0.113.1/24", "fe80::1%eth0")
			},
			want: []corev1.NodeAddress{internal("10.0.0.1")},
			wantErr: []string{
				`invalid InternalIP "10.0.0.256"`,
				`invalid InternalIP "not-an-ip"`,
				`invalid ExternalIP "203.0.113.1/24"`,
				`invalid ExternalIP "fe80::1%eth0": zone not allowed`,
			},
		},
		{
			name:    "wrong DNS type",
			build:   func(b *Builder) { b.AddDNS(corev1.NodeInternalIP, "web-1.example.com") },
			want:    nil,
			wantErr: []string{`"web-1.example.com"`, `"InternalIP"`},
		},
		{
			name:    "unknown family keeps both and reports it",
			family:  "ipv5",
			build:   func(b *Builder) { b.AddInternal("10.0.0.1", "fd00::1") },
			want:    []corev1.NodeAddress{internal("10.0.0.1"), internal("fd00::1")},
			wantErr: []string{`"ipv5"`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := NewBuilder(tt.family)
			tt.build(b)
			got, err := b.Build()
			if (err != nil) != (tt.wantErr != nil) {
				t.Fatalf("Build() error = %v, want error containing %q", err, tt.wantErr)
			}
			for _, s := range tt.wantErr {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("Build() error %q does not contain %q", err, s)
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Build() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestZeroBuilderKeepsBothFamilies(t *testing.T) {
	var b Builder
	got, err := b.AddInternal("fd00::1", "10.0.0.1").Build()
	if err != nil {
		t.Fatal(err)
	}
	want := []corev1.NodeAddress{internal("10.0.0.1"), internal("fd00::1")}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("mismatch (-want +got):\n%s", diff)
	}
}

func TestBuildDoesNotConsumeBuilder(t *testing.T) {
	b := NewBuilder(DualStack).AddExternal("203.0.113.1").AddInternal("10.0.0.1")
	first, _ := b.Build()
	first[0].Address = "mutated"
	second, _ := b.Build()
	want := []corev1.NodeAddress{internal("10.0.0.1"), external("203.0.113.1")}
	if diff := cmp.Diff(want, second); diff != "" {
		t.Errorf("second Build() mismatch (-want +got):\n%s", diff)
	}
}

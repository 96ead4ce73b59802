package skeletonsim_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ccmkit/ccmkit/examples/skeleton/skeletonsim"
)

func TestLaunchInstance(t *testing.T) {
	sim := skeletonsim.New(skeletonsim.Options{})
	got := []skeletonsim.Instance{
		sim.LaunchInstance(skeletonsim.Instance{Name: "a"}),
		sim.LaunchInstance(skeletonsim.Instance{Name: "b", Region: "sk-2", Status: skeletonsim.StatusStopped, PublicIPv4: "none"}),
		sim.LaunchInstance(skeletonsim.Instance{ID: "i-custom", Name: "c", Type: "s-8", Zone: "sk-1c", PrivateIPv4: "10.1.2.3"}),
	}
	want := []skeletonsim.Instance{
		{ID: "i-000001", Name: "a", Type: "s-2", Region: "sk-1", Zone: "sk-1a", Status: "running",
			PrivateIPv4: "10.0.0.2", PublicIPv4: "203.0.113.2", PublicIPv6: "2001:db8::2"},
		{ID: "i-000002", Name: "b", Type: "s-2", Region: "sk-2", Zone: "sk-2a", Status: "stopped",
			PrivateIPv4: "10.0.0.3", PublicIPv6: "2001:db8::3"},
		{ID: "i-custom", Name: "c", Type: "s-8", Region: "sk-1", Zone: "sk-1c", Status: "running",
			PrivateIPv4: "10.1.2.3", PublicIPv4: "203.0.113.4", PublicIPv6: "2001:db8::4"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("LaunchInstance (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, sim.Instances()); diff != "" { // sorted by ID
		t.Errorf("stored (-want +got):\n%s", diff)
	}
}

func TestLaunchInstanceAddressesAreDistinct(t *testing.T) {
	sim := skeletonsim.New(skeletonsim.Options{})
	seen := map[string]int{}
	const n = 759 // public IPv4 addresses repeat after this many
	for i := 1; i <= n; i++ {
		inst := sim.LaunchInstance(skeletonsim.Instance{Name: "n"})
		for _, addr := range []string{inst.PrivateIPv4, inst.PublicIPv4, inst.PublicIPv6} {
			if prev, ok := seen[addr]; ok {
				t.Fatalf("instance %d got %s, as did instance %d", i, addr, prev)
			}
			seen[addr] = i
		}
		if i == 254 && inst.PublicIPv4 != "198.51.100.2" {
			t.Errorf("instance 254: public IPv4 %s, want 198.51.100.2 (the second network)", inst.PublicIPv4)
		}
	}
}

package triton

import "testing"

// The region is TRITON_REGION, or the datacenter name without its
// -<number><letters> suffix, or the whole name when it has none.
func TestRegionOf(t *testing.T) {
	for dc, want := range map[string]string{
		"us-east-1": "us-east", "us-east-3b": "us-east", "eu-ams-1": "eu-ams", "us-sw-1": "us-sw",
		"coal": "coal", "us-demo-1": "us-demo", "dc-12ab": "dc", "-1": "-1",
	} {
		if got := (&Config{}).regionOf(dc); got != want {
			t.Errorf("regionOf(%q) = %q, want %q", dc, got, want)
		}
	}
	if got := (&Config{Region: "west"}).regionOf("us-east-1"); got != "west" {
		t.Errorf("with TRITON_REGION=west: %q", got)
	}
}

package cloud

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
)

func TestSanitizeLabelValue(t *testing.T) {
	long := "az-" + strings.Repeat("x", 70)
	for in, want := range map[string]string{
		"nova":              "nova",
		"AZ 1":              "AZ-1",
		"  rack #3 (east) ": "rack-3-east",
		"zone/a:b":          "zone-a-b",
		"m1.large":          "m1.large",
		"-edge-":            "edge",
		long:                long[:63],
		"":                  "",
	} {
		got := SanitizeLabelValue(in)
		if got != want {
			t.Errorf("SanitizeLabelValue(%q) = %q, want %q", in, got, want)
		}
		if errs := validation.IsValidLabelValue(got); len(errs) > 0 {
			t.Errorf("SanitizeLabelValue(%q) = %q is not a label value: %v", in, got, errs)
		}
	}
}

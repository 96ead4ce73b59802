package cloud

import (
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

var labelInvalid = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// SanitizeLabelValue makes s a valid label value, as OCCM does for zones
// (OCCM #1379: an availability zone may contain spaces): every run of
// characters a label value cannot hold becomes "-", leading and trailing
// non-alphanumerics go, and the result is at most 63 characters. A valid
// value is returned unchanged. The CCM's Node zone label and the CSI
// driver's topology segment are the same value.
func SanitizeLabelValue(s string) string {
	if len(validation.IsValidLabelValue(s)) == 0 {
		return s
	}
	s = labelInvalid.ReplaceAllString(s, "-")
	s = strings.Trim(s, "-_.")
	if len(s) > validation.LabelValueMaxLength {
		s = strings.TrimRight(s[:validation.LabelValueMaxLength], "-_.")
	}
	return s
}

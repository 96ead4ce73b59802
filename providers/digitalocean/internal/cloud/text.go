package cloud

import "regexp"

// ValidTag is what a DigitalOcean tag may be: "Tags may contain letters,
// numbers, colons, dashes, and underscores; up to 255 characters".
var ValidTag = regexp.MustCompile(`^[A-Za-z0-9_:-]{1,255}$`)

// Truncate cuts s to n bytes, marking the cut, for quoting a value from
// the outside in an error.
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

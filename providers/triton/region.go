package triton

import "regexp"

// dcSuffix is what regionOf strips from a datacenter name: its number and
// letters (us-east-3b -> us-east).
var dcSuffix = regexp.MustCompile(`-\d+[a-z]*$`)

// regionOf is the Nodes' region: TRITON_REGION, or the datacenter name
// without its -<number><letters> suffix, or the whole name when it has
// none (a private cloud's "coal").
func (c *Config) regionOf(datacenter string) string {
	if c.Region != "" {
		return c.Region
	}
	if r := dcSuffix.ReplaceAllString(datacenter, ""); r != "" {
		return r
	}
	return datacenter
}

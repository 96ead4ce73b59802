package brightbox

import (
	"fmt"
	"strings"
)

// regionOfZone returns the region a zone handle belongs to, as the
// existing CCM (k8ssdk's MapZoneHandleToRegion) derives it: zone handles
// are <region>-<index> ("gb1-a" is in "gb1"), so it is the handle up to
// its last "-".
func regionOfZone(zone string) (string, error) {
	ix := strings.LastIndex(zone, "-")
	if ix <= 0 {
		return "", fmt.Errorf("zone handle %q is not <region>-<index>", zone)
	}
	return zone[:ix], nil
}

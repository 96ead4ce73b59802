package openstacksim

import (
	"iter"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// vmState and powerState are the OS-EXT-STS attributes of a status.
func vmState(status string) string {
	switch status {
	case StatusActive:
		return "active"
	case StatusShutoff:
		return "stopped"
	case StatusBuild:
		return "building"
	case StatusPaused:
		return "paused"
	case StatusError:
		return "error"
	}
	return strings.ToLower(status)
}

func powerState(status string) int {
	switch status {
	case StatusActive:
		return 1
	case StatusPaused:
		return 3
	case StatusShutoff:
		return 4
	}
	return 0
}

func serverLinks(r *http.Request, id string) []link {
	base := simkit.BaseURL(r)
	return []link{
		{Rel: "self", Href: base + computeV21 + "/servers/" + id},
		{Rel: "bookmark", Href: base + computePrefix + "/servers/" + id},
	}
}

// listAZs lists "nova" and every zone a server is in.
func (s *Server) listAZs(*http.Request, int) response {
	zones := []string{"nova"}
	for _, v := range s.st.servers.All() {
		if !slices.Contains(zones, v.AZ) {
			zones = append(zones, v.AZ)
		}
	}
	slices.Sort(zones)
	out := []map[string]any{}
	for _, z := range zones {
		out = append(out, map[string]any{"zoneName": z, "zoneState": map[string]bool{"available": true}, "hosts": nil})
	}
	return jsonOK(map[string]any{"availabilityZoneInfo": out})
}

func mapKeys[K comparable, V any](m map[K]V) iter.Seq[K] { return maps.Keys(m) }

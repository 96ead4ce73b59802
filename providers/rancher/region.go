package rancher

import (
	"fmt"
	"strings"

	rancher "github.com/rancher/go-rancher/v2"
)

// topology is where a host is and what it is, as the Node's labels say it.
type topology struct {
	Region, Zone, Type string
}

// hostTopology returns a host's region, zone and instance type: from the
// first of the configured labels the host carries, else from the machine
// driver's configuration Rancher kept for the host, else no region and
// zone and cfg.DefaultInstanceType (see Config).
func hostTopology(h *rancher.Host, cfg *Config) topology {
	m := machineTopology(h)
	return topology{
		Region: firstOf(firstLabel(h.Labels, cfg.RegionLabels), m.Region),
		Zone:   firstOf(firstLabel(h.Labels, cfg.ZoneLabels), m.Zone),
		Type:   firstOf(firstLabel(h.Labels, cfg.InstanceTypeLabels), m.Type, cfg.DefaultInstanceType),
	}
}

// machineTopology is what the docker-machine driver configuration of a
// host Rancher created says: amazonec2 (region, zone letter, instance
// type), digitalocean (region, size), azure (location, size) and packet
// (facility, plan). A host added with the custom command has none.
func machineTopology(h *rancher.Host) topology {
	switch {
	case h.Amazonec2Config != nil:
		c := h.Amazonec2Config
		t := topology{Region: c.Region, Type: c.InstanceType}
		if c.Region != "" && c.Zone != "" {
			// docker-machine's zone is the letter: us-east-1 + a.
			t.Zone = c.Region + c.Zone
		}
		return t
	case h.DigitaloceanConfig != nil:
		return topology{Region: h.DigitaloceanConfig.Region, Type: h.DigitaloceanConfig.Size}
	case h.AzureConfig != nil:
		return topology{Region: h.AzureConfig.Location, Type: h.AzureConfig.Size}
	case h.PacketConfig != nil:
		return topology{Region: h.PacketConfig.FacilityCode, Type: h.PacketConfig.Plan}
	}
	return topology{}
}

// firstLabel returns the value of the first of keys that labels has with a
// non-empty value.
func firstLabel(labels map[string]any, keys []string) string {
	for _, k := range keys {
		if v := labelValue(labels, k); v != "" {
			return v
		}
	}
	return ""
}

// labelValue returns the label key of a host as a string (Cattle's labels
// are a JSON object whose values are strings; anything else is printed).
func labelValue(labels map[string]any, key string) string {
	switch v := labels[key].(type) {
	case nil:
		return ""
	case string:
		return strings.TrimSpace(v)
	default:
		return strings.TrimSpace(fmt.Sprint(v))
	}
}

func firstOf(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}

package rancher

import (
	"fmt"
	"strings"

	rancher "github.com/rancher/go-rancher/v2"
	"k8s.io/apimachinery/pkg/util/validation"
)

// topology is where a host is and what it is, as the Node's labels say it.
type topology struct {
	Region, Zone, Type string
}

// hostTopology returns a host's region, zone and instance type: from the
// first of the configured labels the host carries, else from the machine
// driver's configuration Rancher kept for the host, else no region and
// zone and cfg.DefaultInstanceType (see Config). A value that cannot be a
// Kubernetes label value (Rancher's labels can hold any string) is passed
// over, as if absent, and named in skipped: written on the Node it would
// fail the Node's whole update.
func hostTopology(h *rancher.Host, cfg *Config) (t topology, skipped []string) {
	m := machineTopology(h)
	pick := func(keys []string, fallbacks ...string) string {
		for _, k := range keys {
			if v := labelValue(h.Labels, k); v != "" {
				if len(validation.IsValidLabelValue(v)) == 0 {
					return v
				}
				skipped = append(skipped, fmt.Sprintf("label %s=%q", k, v))
			}
		}
		for _, v := range fallbacks {
			if v != "" {
				if len(validation.IsValidLabelValue(v)) == 0 {
					return v
				}
				skipped = append(skipped, fmt.Sprintf("machine driver value %q", v))
			}
		}
		return ""
	}
	t.Region = pick(cfg.RegionLabels, m.Region)
	t.Zone = pick(cfg.ZoneLabels, m.Zone)
	t.Type = pick(cfg.InstanceTypeLabels, m.Type, cfg.DefaultInstanceType)
	return t, skipped
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

// labelValue returns the label key of a host as a string (Cattle's labels
// are a JSON object whose values are strings: convert refuses a host with
// another, and anything else here is printed).
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

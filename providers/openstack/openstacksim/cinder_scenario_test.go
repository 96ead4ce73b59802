package openstacksim

import (
	"net/http"
	"testing"

	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/volumes"
	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/volumetypes"
)

const volumeScenario = `
provider: openstack
provisioningReads: 1
volumeTypes:
- {name: ssd, description: fast}
- {name: shared, extraSpecs: {multiattach: "<is> True"}}
volumeZones: [nova, zone-a]
volumeQuotas: {volumes: 3}
maxDiskDevices: 4
servers:
- {name: node-1, az: zone-a}
volumes:
- {name: pgdata, size: 10, az: zone-a, server: node-1, metadata: {app: postgres}}
- {name: spare, type: shared}
faults:
- {operation: volumes.create, status: 503, count: 1}
`

// TestVolumeScenario: a scenario seeds Cinder's types, zones and quotas
// and volumes (attached to its servers); its faults name Cinder's
// endpoints by short name.
func TestVolumeScenario(t *testing.T) {
	s, err := NewFromScenario([]byte(volumeScenario))
	if err != nil {
		t.Fatal(err)
	}
	s.Start()
	t.Cleanup(s.Close)
	c := connect(t, s, passwordAuth(s))
	all, err := volumes.List(c.volume, volumes.ListOpts{Name: "pgdata"}).AllPages(ctx())
	if err != nil {
		t.Fatal(err)
	}
	vs, _ := volumes.ExtractVolumes(all)
	if len(vs) != 1 || vs[0].Status != VolumeInUse || vs[0].Size != 10 || vs[0].VolumeType != "ssd" || vs[0].AvailabilityZone != "zone-a" ||
		len(vs[0].Attachments) != 1 || vs[0].Attachments[0].ServerID != s.Servers()[0].ID || vs[0].Attachments[0].Device != "/dev/vdb" ||
		vs[0].Metadata["app"] != "postgres" {
		t.Fatalf("pgdata %+v", vs)
	}
	if spare := s.Volumes()[1]; !spare.Multiattach || spare.VolumeType != "shared" || spare.AZ != "nova" || spare.Status != VolumeAvailable {
		t.Errorf("spare %+v", spare)
	}
	tp, _ := volumetypes.List(c.volume, nil).AllPages(ctx())
	if types, _ := volumetypes.ExtractVolumeTypes(tp); len(types) != 2 || types[0].Name != "ssd" {
		t.Errorf("types %+v", types)
	}
	_, err = volumes.Create(ctx(), c.volume, volumes.CreateOpts{Size: 1}, nil).Extract()
	wantFault(t, err, http.StatusServiceUnavailable, "serviceUnavailable", "")
	createVolume(t, c.volume, volumes.CreateOpts{Size: 1})
	_, err = volumes.Create(ctx(), c.volume, volumes.CreateOpts{Size: 1}, nil).Extract()
	wantFault(t, err, http.StatusRequestEntityTooLarge, "overLimit", "Maximum number of volumes allowed (3) exceeded for quota 'volumes'.")
	if _, err := LoadScenario([]byte("volumes: [{size: -1}]\nvolumeTypes: [{description: x}]")); err == nil {
		t.Error("a bad volume scenario loads")
	}
}

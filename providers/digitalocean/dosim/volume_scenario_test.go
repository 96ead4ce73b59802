package dosim

import (
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/digitalocean/godo"
)

const volumeScenario = `
provider: digitalocean
region: sfo3
provisioningReads: 1
volumesPerDroplet: 1
droplets:
- name: node-1
- name: node-2
volumes:
- name: pgdata
  size: 100
  droplet: node-1
  filesystemType: ext4
  tags: [db]
- name: spare
faults:
- {operation: volumes.create, status: 503, count: 1}
- {operation: volumes.actions, status: 429, count: 1}
`

// TestVolumeScenario: a scenario seeds volumes (attached to its droplets)
// and the per-droplet limit; its faults name the volume endpoints by short
// name; /_sim/state holds volumes, snapshots and volume actions.
func TestVolumeScenario(t *testing.T) {
	s, err := NewFromScenario([]byte(volumeScenario))
	if err != nil {
		t.Fatal(err)
	}
	s.Start()
	t.Cleanup(s.Close)
	c := newClient(t, s, s.Token(), 0)
	vs, _, err := c.Storage.ListVolumes(ctx(), &godo.ListVolumeParams{Name: "pgdata", Region: "sfo3"})
	if err != nil || len(vs) != 1 {
		t.Fatalf("pgdata: %+v %v", vs, err)
	}
	pg := vs[0]
	node1 := s.Droplets()[0]
	if pg.SizeGigaBytes != 100 || len(pg.DropletIDs) != 1 || pg.DropletIDs[0] != node1.ID || pg.FilesystemType != "ext4" ||
		len(node1.VolumeIDs) != 1 || node1.VolumeIDs[0] != pg.ID {
		t.Errorf("pgdata %+v, node-1 volume_ids %v", pg, node1.VolumeIDs)
	}

	_, _, err = c.Storage.CreateVolume(ctx(), &godo.VolumeCreateRequest{Name: "new", Region: "sfo3", SizeGigaBytes: 1})
	wantStatus(t, err, http.StatusServiceUnavailable)
	if _, _, err := c.Storage.CreateVolume(ctx(), &godo.VolumeCreateRequest{Name: "new", Region: "sfo3", SizeGigaBytes: 1}); err != nil {
		t.Fatal(err)
	}
	spare, _, _ := c.Storage.ListVolumes(ctx(), &godo.ListVolumeParams{Name: "spare"})
	_, _, err = c.StorageActions.Attach(ctx(), spare[0].ID, node1.ID)
	wantStatus(t, err, http.StatusTooManyRequests)
	_, _, err = c.StorageActions.Attach(ctx(), spare[0].ID, node1.ID)
	wantMessage(t, "attach beyond volumesPerDroplet: 1", err, 422, msgVolumeLimit)
	if _, _, err := c.StorageActions.Attach(ctx(), spare[0].ID, s.Droplets()[1].ID); err != nil {
		t.Fatal(err)
	}

	resp, err := http.Get(s.URL() + "/_sim/state")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st Snapshot
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	if len(st.Volumes) != 3 || len(st.VolumeActions) != 1 || st.VolumeActions[0].Type != "attach_volume" || st.Snapshots == nil {
		t.Errorf("/_sim/state: %d volumes, volume actions %+v, snapshots %v", len(st.Volumes), st.VolumeActions, st.Snapshots)
	}
}

// TestVolumeScenarioErrors: every problem with a scenario's volumes is
// reported at once.
func TestVolumeScenarioErrors(t *testing.T) {
	_, err := LoadScenario([]byte(`
volumesPerDroplet: 1
droplets:
- name: node-1
- name: far
  region: sfo3
volumes:
- name: Bad_Name
- name: a
  size: 20000
- name: a
- name: b
  droplet: nobody
- name: c
  droplet: far
- name: d
  filesystemType: btrfs
- name: e
  droplet: node-1
- name: f
  droplet: node-1
- name: g
  region: mars1
`))
	if err == nil {
		t.Fatal("bad scenario accepted")
	}
	for _, want := range []string{
		"volumes[0].name", "volumes[1].size", "volumes[2].name", "volumes[3].droplet", "volumes[4].droplet",
		"volumes[5].filesystemType", "volumes[7].droplet", "volumes[8].region",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("no %s in %v", want, err)
		}
	}
	if strings.Contains(err.Error(), "volumes[6]") {
		t.Errorf("volumes[6] is fine: %v", err)
	}
}

// TestExampleScenario: examples/cloudsim/digitalocean.yaml loads, its
// volume attached to worker-1.
func TestExampleScenario(t *testing.T) {
	data, err := os.ReadFile("../../../examples/cloudsim/digitalocean.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewFromScenario(data)
	if err != nil {
		t.Fatal(err)
	}
	vs := s.Volumes()
	if len(vs) != 1 || vs[0].Name != "pgdata" || len(vs[0].DropletIDs) != 1 || vs[0].DropletIDs[0] != s.Droplets()[0].ID {
		t.Errorf("volumes: %+v", vs)
	}
}

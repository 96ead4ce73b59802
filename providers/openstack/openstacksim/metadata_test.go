package openstacksim

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/volumeattach"
)

// fetch GETs url with no token and returns the status and body.
func fetch(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(data)
}

// TestMetadataService: each server's OpenStack metadata service, with no
// token: the version list, each version's documents, meta_data.json with
// Nova's fields (project_id from 2015-10-15, devices from 2016-06-30,
// listing tagged volumes), 404 for an unknown server or version; and the
// same documents written as a config drive.
func TestMetadataService(t *testing.T) {
	s, c := setup(t, Options{ProvisioningReads: -1})
	srv := s.AddServer(NovaServer{Name: "Node_1.example", AZ: "zone-a", Metadata: map[string]string{"role": "worker"}}).ID
	vol, _ := s.AddVolume(Volume{Size: 1, AZ: "zone-a"})
	if _, err := volumeattach.Create(ctx(), atVersion(c.compute, "2.49"), srv, volumeattach.CreateOpts{VolumeID: vol.ID, Tag: "data"}).Extract(); err != nil {
		t.Fatal(err)
	}
	base := s.URL() + "/_sim/metadata/" + srv
	if status, body := fetch(t, base+"/openstack"); status != 200 || !strings.HasPrefix(body, "2012-08-10\n") || !strings.HasSuffix(body, "\n2020-10-14\nlatest") {
		t.Errorf("versions: %d %q", status, body)
	}
	if status, body := fetch(t, base+"/openstack/latest"); status != 200 || !strings.Contains(body, "meta_data.json") || !strings.Contains(body, "network_data.json") {
		t.Errorf("latest: %d %q", status, body)
	}
	var md struct {
		UUID, Name, Hostname, AZ string
		ProjectID                string            `json:"project_id"`
		AvailabilityZone         string            `json:"availability_zone"`
		LaunchIndex              *int              `json:"launch_index"`
		Meta                     map[string]string `json:"meta"`
		RandomSeed               string            `json:"random_seed"`
		Devices                  []struct {
			Type, Bus, Serial, Path string
			Tags                    []string
		} `json:"devices"`
	}
	status, body := fetch(t, base+"/openstack/latest/meta_data.json")
	if err := json.Unmarshal([]byte(body), &md); err != nil || status != 200 {
		t.Fatalf("meta_data.json: %d %s %v", status, body, err)
	}
	if md.UUID != srv || md.Name != "Node_1.example" || md.Hostname != "node-1-example.novalocal" || md.AvailabilityZone != "zone-a" ||
		md.ProjectID != s.opts.Users[0].ProjectID || md.LaunchIndex == nil || md.Meta["role"] != "worker" || md.RandomSeed == "" {
		t.Errorf("meta_data.json %s", body)
	}
	if len(md.Devices) != 1 || md.Devices[0].Serial != vol.ID || md.Devices[0].Path != "/dev/vdb" || md.Devices[0].Tags[0] != "data" || md.Devices[0].Type != "disk" {
		t.Errorf("devices %+v", md.Devices)
	}
	status, body = fetch(t, base+"/openstack/2012-08-10/meta_data.json")
	if status != 200 || strings.Contains(body, "project_id") || strings.Contains(body, "random_seed") || !strings.Contains(body, `"uuid":"`+srv) {
		t.Errorf("2012-08-10: %d %s", status, body)
	}
	for _, bad := range []string{
		s.URL() + "/_sim/metadata/nope/openstack/latest/meta_data.json",
		base + "/openstack/2011-01-01/meta_data.json",
		base + "/openstack/2012-08-10/network_data.json",
		base + "/ec2/latest",
	} {
		if status, _ := fetch(t, bad); status != 404 {
			t.Errorf("%s: %d, want 404", bad, status)
		}
	}

	root := httptest.NewServer(s.MetadataHandler(srv))
	defer root.Close()
	if status, body := fetch(t, root.URL+"/openstack/latest/meta_data.json"); status != 200 || !strings.Contains(body, `"uuid":"`+srv) {
		t.Errorf("MetadataHandler: %d %s", status, body)
	}

	dir := t.TempDir()
	if err := s.WriteConfigDrive(dir, srv); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "openstack", "latest", "meta_data.json"))
	if err != nil || string(data) != func() string { _, b := fetch(t, base+"/openstack/latest/meta_data.json"); return b }() {
		t.Errorf("config drive meta_data.json %s %v", data, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "openstack", "2012-08-10", "meta_data.json")); err != nil {
		t.Error(err)
	}
	if err := s.WriteConfigDrive(t.TempDir(), "nope"); err == nil {
		t.Error("config drive of an unknown server")
	}
}

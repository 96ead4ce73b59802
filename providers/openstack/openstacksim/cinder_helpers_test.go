package openstacksim

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/snapshots"
	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/volumes"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// The simulator's Hypervisor in tests: simkit's recorder.
type (
	hvCall   = simkit.HypervisorCall
	recorder = simkit.RecordingHypervisor
)

// disk is what the Hypervisor is told about a volume of gib GiB.
func disk(id string, gib int64, server string) simkit.Disk {
	return simkit.Disk{ID: id, ByIDName: ByIDName(id), SizeBytes: gib << 30, Server: server}
}

// atVersion is a copy of sc asking for microversion v.
func atVersion(sc *gophercloud.ServiceClient, v string) *gophercloud.ServiceClient {
	c := *sc
	c.Microversion = v
	return &c
}

// createVolume creates a volume through gophercloud, failing the test on
// error.
func createVolume(t *testing.T, c *gophercloud.ServiceClient, opts volumes.CreateOpts) *volumes.Volume {
	t.Helper()
	v, err := volumes.Create(ctx(), c, opts, nil).Extract()
	if err != nil {
		t.Fatalf("create volume %+v: %v", opts, err)
	}
	return v
}

// getVolume reads a volume (a read: it may settle a task).
func getVolume(t *testing.T, c *gophercloud.ServiceClient, id string) *volumes.Volume {
	t.Helper()
	v, err := volumes.Get(ctx(), c, id).Extract()
	if err != nil {
		t.Fatalf("get volume %s: %v", id, err)
	}
	return v
}

// wantVolumeStatus reads the volume until its status is want, failing
// after a few reads (each read counts towards ProvisioningReads).
func wantVolumeStatus(t *testing.T, c *gophercloud.ServiceClient, id, want string) *volumes.Volume {
	t.Helper()
	var v *volumes.Volume
	for range 5 {
		if v = getVolume(t, c, id); v.Status == want {
			return v
		}
	}
	t.Fatalf("volume %s: status %q after 5 reads, want %q", id, v.Status, want)
	return nil
}

// wantSnapshotStatus is wantVolumeStatus for a snapshot.
func wantSnapshotStatus(t *testing.T, c *gophercloud.ServiceClient, id, want string) *snapshots.Snapshot {
	t.Helper()
	var sn *snapshots.Snapshot
	for range 5 {
		var err error
		if sn, err = snapshots.Get(ctx(), c, id).Extract(); err != nil {
			t.Fatalf("get snapshot %s: %v", id, err)
		}
		if sn.Status == want {
			return sn
		}
	}
	t.Fatalf("snapshot %s: status %q after 5 reads, want %q", id, sn.Status, want)
	return nil
}

// wantFault fails unless err is an HTTP status with a Nova/Cinder fault
// body {key: {"code": status, "message": message}} (message "" for any).
func wantFault(t *testing.T, err error, status int, key, message string) {
	t.Helper()
	wantCode(t, err, status)
	var e gophercloud.ErrUnexpectedResponseCode
	errors.As(err, &e)
	var body map[string]struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
	if jerr := json.Unmarshal(e.Body, &body); jerr != nil {
		t.Fatalf("error body %s: %v", e.Body, jerr)
	}
	f, ok := body[key]
	if !ok || f.Code != status || message != "" && f.Message != message {
		t.Fatalf("error body %s, want %s %d %q", e.Body, key, status, message)
	}
}

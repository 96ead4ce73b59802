package ranchersim

import (
	"maps"
	"net/http"
	"slices"
	"testing"

	rancher "github.com/rancher/go-rancher/v2"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// storageSetup is a simulator with two hosts and Rancher NFS, and a
// client.
func storageSetup(t *testing.T) (*Server, *rancher.RancherClient, StorageDriver) {
	t.Helper()
	s, c := setup(t, Options{})
	s.AddHost(Host{Hostname: "node-a"})
	s.AddHost(Host{Hostname: "node-b"})
	return s, c, s.AddStorageDriver(RancherNFS())
}

// volumeByID reads a volume with the client; nil when the API says 404.
func volumeByID(t *testing.T, c *rancher.RancherClient, id string) *rancher.Volume {
	t.Helper()
	v, err := c.Volume.ById(id)
	if err != nil {
		t.Fatalf("ById(%s): %v", id, err)
	}
	return v
}

// TestVolumeLifecycle: a volume created by driver name registers, then is
// inactive in the driver's pool with its storage driver resolved; a list
// by name finds it; remove makes it removed (hidden from lists, still
// answered by ID); purge purges it, and the record then goes (404).
func TestVolumeLifecycle(t *testing.T) {
	s, c, nfs := storageSetup(t)
	vol, err := c.Volume.Create(&rancher.Volume{Name: "data", Driver: DriverRancherNFS,
		DriverOpts: map[string]any{"onRemove": "purge", "mntOptions": "vers=4.1"}})
	if err != nil {
		t.Fatal(err)
	}
	if vol.State != StateRegistering || vol.Transitioning != "yes" || vol.Uri != "rancher-nfs:///data" ||
		vol.StorageDriverId != "" || vol.Kind != "volume" || vol.DriverOpts["mntOptions"] != "vers=4.1" {
		t.Fatalf("created %+v", vol)
	}
	if _, ok := vol.Actions["remove"]; !ok {
		t.Errorf("a registering volume's actions %v lack remove", vol.Actions)
	}
	s.Advance()
	got := volumeByID(t, c, vol.Id)
	if got.State != StateInactive || got.StorageDriverId != nfs.ID || got.Transitioning != "no" {
		t.Fatalf("settled: state %s, storageDriverId %q, want inactive, %s", got.State, got.StorageDriverId, nfs.ID)
	}
	if !slices.Equal(slices.Sorted(maps.Keys(got.Actions)), []string{"remove", "update"}) {
		t.Errorf("inactive volume's actions %v, want remove and update", got.Actions)
	}
	pools, err := c.StoragePool.List(filters("driverName", DriverRancherNFS))
	if err != nil || len(pools.Data) != 1 || !slices.Equal(pools.Data[0].VolumeIds, []string{vol.Id}) {
		t.Fatalf("pools %+v (%v), want one holding %s", pools, err, vol.Id)
	}

	for _, f := range []*rancher.ListOpts{
		filters("name", "data"),
		filters("name", "data", "storageDriverId", nfs.ID, "removed_null", "true"),
		filters("state", StateInactive),
	} {
		list, err := c.Volume.List(f)
		if err != nil || len(list.Data) != 1 || list.Data[0].Id != vol.Id {
			t.Errorf("List(%v) = %+v, %v; want %s", f.Filters, list, err, vol.Id)
		}
	}
	if list, _ := c.Volume.List(filters("name", "other")); len(list.Data) != 0 {
		t.Errorf("List(name=other) = %d volumes", len(list.Data))
	}
	// driver is no collection filter of Cattle's: it filters nothing.
	if list, _ := c.Volume.List(filters("driver", "rancher-ebs")); len(list.Data) != 1 {
		t.Errorf("List(driver=rancher-ebs) = %d volumes, want the filter ignored", len(list.Data))
	}

	removing, err := c.Volume.ActionRemove(got)
	if err != nil || removing.State != StateRemoving {
		t.Fatalf("remove: %+v, %v", removing, err)
	}
	s.Advance()
	removed := volumeByID(t, c, vol.Id)
	if removed.State != StateRemoved || removed.Removed == "" || len(removed.Actions) != 1 || removed.Actions["purge"] == "" {
		t.Fatalf("removed: %+v", removed)
	}
	if list, _ := c.Volume.List(filters("name", "data")); len(list.Data) != 0 {
		t.Errorf("a removed volume is listed: %+v", list.Data)
	}
	if pools, _ := c.StoragePool.List(nil); len(pools.Data[0].VolumeIds) != 0 {
		t.Errorf("the pool still holds %v", pools.Data[0].VolumeIds)
	}

	// Purged before Cattle's purge monitor gets to it (reads count
	// towards that: see TestVolumeDeleteIsRemove).
	purging, err := c.Volume.ActionPurge(removed)
	if err != nil || purging.State != StatePurging {
		t.Fatalf("purge: %+v, %v", purging, err)
	}
	if list, _ := c.Volume.List(filters("name", "data", "_removed", "true")); len(list.Data) != 1 {
		t.Errorf("?_removed lists %d volumes, want the removed one", len(list.Data))
	}
	s.Advance()
	if purged := volumeByID(t, c, vol.Id); purged == nil || purged.State != StatePurged {
		t.Fatalf("after purging: %+v", purged)
	}
	s.Advance()
	if gone := volumeByID(t, c, vol.Id); gone != nil {
		t.Fatalf("a purged volume is still answered: %+v", gone)
	}
	if _, found := s.Volume(vol.Id); found {
		t.Error("Volume() still holds the purged volume")
	}
}

// TestVolumeDeleteIsRemove: DELETE runs the remove process; Cattle's
// purge monitor then purges the removed volume by itself (here on the
// following Advances, or reads).
func TestVolumeDeleteIsRemove(t *testing.T) {
	s, c, _ := storageSetup(t)
	vol, err := c.Volume.Create(&rancher.Volume{Name: "scratch", Driver: DriverRancherNFS})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Volume.Delete(vol); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Volume(vol.Id); got.State != StateRemoving {
		t.Fatalf("after DELETE: %s, want removing", got.State)
	}
	for range 3 { // removed; purging, purged; gone
		s.Advance()
	}
	if _, found := s.Volume(vol.Id); found {
		t.Fatal("the removed volume was not purged")
	}
}

// TestVolumeCreateErrors: Cattle's answers to bad creates, and the
// duplicates it lets through.
func TestVolumeCreateErrors(t *testing.T) {
	s, c, nfs := storageSetup(t)
	local := s.AddStorageDriver(StorageDriver{Name: "local-lvm", Scope: ScopeLocal})
	_, err := c.Volume.Create(&rancher.Volume{Name: "nodriver"})
	wantAPIError(t, err, http.StatusUnprocessableEntity, "code=MissingRequired", "Either driver or storageDriverId is required")
	_, err = c.Volume.Create(&rancher.Volume{Driver: DriverRancherNFS})
	wantAPIError(t, err, http.StatusUnprocessableEntity, "code=MissingRequired", "fieldName=name")
	_, err = c.Volume.Create(&rancher.Volume{Name: "x", StorageDriverId: "1sd999"})
	wantAPIError(t, err, http.StatusUnprocessableEntity, "code=InvalidReference", "fieldName=storageDriverId")
	_, err = c.Volume.Create(&rancher.Volume{Name: "x", Driver: DriverRancherNFS, HostId: "1h999"})
	wantAPIError(t, err, http.StatusUnprocessableEntity, "code=InvalidReference", "fieldName=hostId")
	_, err = c.Volume.Create(&rancher.Volume{Name: "x", Driver: "no-such-driver", SizeMb: 1024})
	wantAPIError(t, err, http.StatusUnprocessableEntity, "code=InvalidOption",
		"Volume driver no-such-driver does not support specifying a size.")
	_, err = c.Volume.Create(&rancher.Volume{Name: "x", Driver: DriverRancherNFS, SizeMb: 1024})
	wantAPIError(t, err, http.StatusUnprocessableEntity, "code=InvalidOption")
	sized, err := c.Volume.Create(&rancher.Volume{Name: "sized", Driver: local.Name, SizeMb: 1024})
	if err != nil || sized.SizeMb != 1024 {
		t.Fatalf("a local-scope driver's volume with a size: %+v, %v", sized, err)
	}

	first, err := c.Volume.Create(&rancher.Volume{Name: "dup", StorageDriverId: nfs.ID})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Volume.Create(&rancher.Volume{Name: "dup", StorageDriverId: nfs.ID})
	wantAPIError(t, err, http.StatusUnprocessableEntity, "code=NotUnique", "fieldName=name")
	// Named by driver only, Cattle checks nothing (VolumeCreateValidationFilter
	// looks at the request's storageDriverId alone).
	second, err := c.Volume.Create(&rancher.Volume{Name: "dup", Driver: DriverRancherNFS})
	if err != nil || second.Id == first.Id {
		t.Fatalf("a duplicate by driver name: %+v, %v", second, err)
	}
	// The first removed, its name is free again.
	s.RemoveVolume(first.Id)
	s.Advance()
	if _, err := c.Volume.Create(&rancher.Volume{Name: "dup-2", StorageDriverId: nfs.ID}); err != nil {
		t.Fatal(err)
	}

	unknown, err := c.Volume.Create(&rancher.Volume{Name: "plain", Driver: "no-such-driver"})
	if err != nil {
		t.Fatal(err)
	}
	s.Advance()
	if got := volumeByID(t, c, unknown.Id); got.State != StateInactive || got.StorageDriverId != "" || got.Driver != "no-such-driver" {
		t.Errorf("a volume of a driver Rancher does not know: %+v", got)
	}
	defer s.Fail(http.StatusServiceUnavailable, Operations["volumes.create"])()
	_, err = c.Volume.Create(&rancher.Volume{Name: "faulted", Driver: DriverRancherNFS})
	wantAPIError(t, err, http.StatusServiceUnavailable)
}

// TestVolumeInUse: a container's mount activates a volume, which then
// cannot be removed (DELETE 405, no remove action) until its mounts are
// gone and it is detached.
func TestVolumeInUse(t *testing.T) {
	s, c, _ := storageSetup(t)
	vol := s.AddVolume(Volume{Name: "db", Driver: DriverRancherNFS})
	m := s.AddMount(Mount{VolumeID: vol.ID, InstanceName: "db-1", Path: "/var/lib/db"})
	s.Advance()
	got := volumeByID(t, c, vol.ID)
	if got.State != StateActive || got.AccessMode != AccessMultiHostRW || len(got.Mounts) != 1 ||
		got.Mounts[0].InstanceName != "db-1" || got.Mounts[0].Path != "/var/lib/db" {
		t.Fatalf("mounted volume: %+v", got)
	}
	if _, ok := got.Actions["remove"]; ok {
		t.Errorf("an active volume offers remove: %v", got.Actions)
	}
	if err := c.Volume.Delete(got); err == nil {
		t.Fatal("DELETE of an active volume succeeded")
	} else {
		wantAPIError(t, err, http.StatusMethodNotAllowed)
	}
	a := call(t, s, http.MethodPost, "/volumes/"+vol.ID+"?action=remove", "")
	if a.status != http.StatusUnprocessableEntity || a.body["code"] != codeActionNotAvail {
		t.Errorf("remove action on an active volume: %d %v", a.status, a.body)
	}
	mounts, err := c.Mount.List(filters("volumeId", vol.ID))
	if err != nil || len(mounts.Data) != 1 || mounts.Data[0].Id != m.ID || mounts.Data[0].Path != "/var/lib/db" {
		t.Fatalf("mounts: %+v, %v", mounts, err)
	}

	s.RemoveMount(m.ID)
	s.Advance()
	if got = volumeByID(t, c, vol.ID); got.State != StateDetached || len(got.Mounts) != 0 {
		t.Fatalf("after its mount went: %+v", got)
	}
	if err := c.Volume.Delete(got); err != nil {
		t.Fatal(err)
	}
}

// TestVolumeHostDetaches: a new hostId (PUT) runs the update process,
// which maps the volume to the driver's pool on that host and ends it
// detached, as a host's storage driver saving the volume does; fields a
// PUT may not change are dropped.
func TestVolumeHostDetaches(t *testing.T) {
	s, c, _ := storageSetup(t)
	h, _ := s.HostByHostname("node-b")
	vol, err := c.Volume.Create(&rancher.Volume{Name: "logs", Driver: DriverRancherNFS})
	if err != nil {
		t.Fatal(err)
	}
	s.Advance()
	// The update action, with no host to map it to, comes back inactive.
	if upd, err := c.Volume.ActionUpdate(volumeByID(t, c, vol.Id)); err != nil || upd.State != StateUpdatingInactive {
		t.Fatalf("update action: %+v, %v", upd, err)
	}
	s.Advance()
	vol = volumeByID(t, c, vol.Id)
	if vol.State != StateInactive {
		t.Fatalf("after the update action: %s, want inactive", vol.State)
	}
	upd, err := c.Volume.Update(vol, map[string]any{"hostId": h.ID, "driverOpts": map[string]any{"created": "true"},
		"name": "renamed", "description": "app logs"})
	if err != nil {
		t.Fatal(err)
	}
	if upd.State != StateUpdatingInactive || upd.HostId != h.ID || upd.Name != "logs" || upd.Description != "app logs" ||
		upd.DriverOpts["created"] != "true" {
		t.Fatalf("PUT: %+v", upd)
	}
	s.Advance()
	if got, _ := s.Volume(vol.Id); got.State != StateDeactivating {
		t.Fatalf("after the update: %s, want deactivating", got.State)
	}
	s.Advance()
	if got := volumeByID(t, c, vol.Id); got.State != StateDetached {
		t.Fatalf("after deactivating: %s, want detached", got.State)
	}
	// Now detached, a volume cannot take another host.
	a := call(t, s, http.MethodPut, "/volumes/"+vol.Id, `{"hostId":"`+s.Hosts()[0].ID+`"}`)
	if a.status != http.StatusConflict {
		t.Errorf("PUT hostId of a detached volume: %d %v", a.status, a.body)
	}
}

// TestStorageDriversAndPools: storage drivers are listed by name as
// rancher/storage looks its driver up; an environment-scope driver has
// one pool every live host is in, a local-scope one a pool per host
// (one for a host added later too).
func TestStorageDriversAndPools(t *testing.T) {
	s, c, nfs := storageSetup(t)
	ebs := s.AddStorageDriver(RancherEBS())
	lvm := s.AddStorageDriver(StorageDriver{Name: "lvm", Scope: ScopeLocal, VolumeCapabilities: []string{"snapshot"}})
	drivers, err := c.StorageDriver.List(filters("name", DriverRancherEBS, "removed_null", true))
	if err != nil || len(drivers.Data) != 1 {
		t.Fatalf("drivers named rancher-ebs: %+v, %v", drivers, err)
	}
	if d := drivers.Data[0]; d.Id != ebs.ID || d.Scope != ScopeEnvironment || d.VolumeAccessMode != AccessSingleHostRW ||
		d.State != StateActive || d.Kind != "storageDriver" {
		t.Errorf("rancher-ebs: %+v", d)
	}
	got, err := c.StorageDriver.ById(nfs.ID)
	if err != nil || got.VolumeAccessMode != AccessMultiHostRW {
		t.Errorf("ById(%s): %+v, %v", nfs.ID, got, err)
	}
	hosts := []string{s.Hosts()[0].ID, s.Hosts()[1].ID}
	pools, err := c.StoragePool.List(filters("storageDriverId", nfs.ID))
	if err != nil || len(pools.Data) != 1 || !slices.Equal(pools.Data[0].HostIds, hosts) ||
		pools.Data[0].DriverName != DriverRancherNFS || pools.Data[0].VolumeAccessMode != AccessMultiHostRW {
		t.Fatalf("rancher-nfs's pools: %+v, %v", pools, err)
	}
	third := s.AddHost(Host{Hostname: "node-c"})
	local, err := c.StoragePool.List(filters("storageDriverId", lvm.ID))
	if err != nil || len(local.Data) != 3 {
		t.Fatalf("lvm's pools: %+v, %v; want one per host", local, err)
	}
	if l := local.Data[2]; !slices.Equal(l.HostIds, []string{third.ID}) || !slices.Equal(l.VolumeCapabilities, []string{"snapshot"}) {
		t.Errorf("the new host's pool: %+v", l)
	}
	if all, _ := c.StoragePool.List(filters("driverName", DriverRancherNFS)); !slices.Equal(all.Data[0].HostIds, append(hosts, third.ID)) {
		t.Errorf("the environment pool's hosts %v lack the new host", all.Data[0].HostIds)
	}
	a := call(t, s, http.MethodPost, "/storagedrivers", `{"name":"mine"}`)
	if a.status != http.StatusMethodNotAllowed {
		t.Errorf("POST storagedrivers: %d, want 405", a.status)
	}
	a = call(t, s, http.MethodGet, "/storagedrivers/"+nfs.ID+"/storagepools", "")
	if ids := a.dataIDs(); len(ids) != 1 {
		t.Errorf("the driver's storagePools link: %v", ids)
	}
}

// TestVolumesOtherEnvironment: another environment's key sees none of
// this environment's volumes or drivers.
func TestVolumesOtherEnvironment(t *testing.T) {
	s, c, _ := storageSetup(t)
	vol, err := c.Volume.Create(&rancher.Volume{Name: "mine", Driver: DriverRancherNFS})
	if err != nil {
		t.Fatal(err)
	}
	o := s.OtherEnvironment()
	oc := connectAs(t, o.ProjectURL(s.URL()), OtherAccessKey, OtherSecretKey)
	if list, err := oc.Volume.List(nil); err != nil || len(list.Data) != 0 {
		t.Errorf("the other environment lists %+v, %v", list, err)
	}
	if got, err := oc.Volume.ById(vol.Id); err != nil || got != nil {
		t.Errorf("the other environment reads %+v, %v", got, err)
	}
	if list, err := oc.StorageDriver.List(nil); err != nil || len(list.Data) != 0 {
		t.Errorf("the other environment's drivers: %+v, %v", list, err)
	}
}

// TestVolumesSettleWithTime: with SettleAfter, a volume registers and is
// removed and purged with time alone.
func TestVolumesSettleWithTime(t *testing.T) {
	s, c := setup(t, timeOnly())
	s.AddStorageDriver(RancherNFS())
	vol, err := c.Volume.Create(&rancher.Volume{Name: "timed", Driver: DriverRancherNFS})
	if err != nil {
		t.Fatal(err)
	}
	simkit.WaitFor(t, "volume inactive", func() bool { got, _ := s.Volume(vol.Id); return got.State == StateInactive })
	s.RemoveVolume(vol.Id)
	simkit.WaitFor(t, "volume purged", func() bool { _, found := s.Volume(vol.Id); return !found })
}

// TestStorageSchemaFlagsMatchDump: the storage types' fields are
// creatable and updatable as the v2-beta dump says.
func TestStorageSchemaFlagsMatchDump(t *testing.T) {
	dump := dumpSchemas(t)
	for _, d := range storageDefs {
		real, ok := dump[d.id]
		if !ok {
			t.Fatalf("the dump has no schema %s", d.id)
		}
		for name, f := range d.fields {
			want, ok := real[name]
			if !ok {
				continue
			}
			if f.Create != want.Create || f.Update != want.Update {
				t.Errorf("%s.%s: create %v update %v, the dump says create %v update %v", d.id, name, f.Create, f.Update, want.Create, want.Update)
			}
		}
	}
}

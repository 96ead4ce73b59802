package dosim

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// SnapshotRecord is a snapshot as the API serves it (godo.Snapshot's JSON;
// openapi specification/resources/snapshots/models/snapshots.yml): of a
// volume (POST /v2/volumes/{id}/snapshots; a UUID) or of a droplet (its
// snapshot action; a number). Tags is [] when it has none.
type SnapshotRecord struct {
	ID            string   `json:"id"`
	Name          string   `json:"name"`
	CreatedAt     string   `json:"created_at"`
	Regions       []string `json:"regions"`
	ResourceID    string   `json:"resource_id"`
	ResourceType  string   `json:"resource_type"`
	MinDiskSize   int      `json:"min_disk_size"`
	SizeGigabytes float64  `json:"size_gigabytes"`
	Tags          []string `json:"tags"`
}

func (sn *SnapshotRecord) clone() SnapshotRecord {
	c := *sn
	c.Regions, c.Tags = slices.Clone(sn.Regions), slices.Clone(sn.Tags)
	return c
}

// createVolumeSnapshot serves POST /v2/volumes/{id}/snapshots: 201 with
// the snapshot, at once, attached or not. Its min_disk_size and
// size_gigabytes are the volume's size. A name another volume snapshot has
// is 409 (csi-digitalocean's CreateSnapshot: "409 is returned when we try
// to snapshot a volume with the same name"). The Hypervisor copies the
// blocks; if it fails, so does the request (500).
func (s *Server) createVolumeSnapshot(r *http.Request) (int, any) {
	v, ok := s.st.volumes.Get(r.PathValue("id"))
	if !ok {
		return notFound()
	}
	var req struct {
		Name string   `json:"name"`
		Tags []string `json:"tags"`
	}
	if err := simkit.Decode(r, &req); err != nil {
		return badJSON(err)
	}
	if req.Name == "" {
		return fail(http.StatusBadRequest, "name is required")
	}
	for _, t := range req.Tags {
		if !validTag.MatchString(t) {
			return unprocessable("tag %q must be 1 to 255 letters, digits, '_', '-' or ':'", t)
		}
	}
	st := s.st
	if _, dup := st.snapshots.Find(func(sn *SnapshotRecord) bool {
		return sn.ResourceType == "volume" && sn.Name == req.Name
	}); dup {
		return fail(http.StatusConflict, "a snapshot named %q already exists", req.Name)
	}
	st.snapSeq++
	sn := &SnapshotRecord{
		ID: uuid(6, st.snapSeq), Name: req.Name, CreatedAt: st.now().UTC().Format(time.RFC3339),
		Regions: []string{v.Region.Slug}, ResourceID: v.ID, ResourceType: "volume",
		MinDiskSize: int(v.SizeGigabytes), SizeGigabytes: float64(v.SizeGigabytes), Tags: append([]string{}, req.Tags...),
	}
	if err := s.hypervisor(func(h simkit.Hypervisor) error { return h.Snapshot(v.disk(v.attachedTo()), sn.ID) }); err != nil {
		return fail(http.StatusInternalServerError, "failed to create snapshot: %v", err)
	}
	st.addTags(sn.Tags)
	st.snapshots.Put(sn.ID, sn)
	return http.StatusCreated, map[string]any{"snapshot": sn.clone()}
}

// listVolumeSnapshots serves GET /v2/volumes/{id}/snapshots.
func (s *Server) listVolumeSnapshots(r *http.Request) (int, any) {
	id := r.PathValue("id")
	if _, ok := s.st.volumes.Get(id); !ok {
		return notFound()
	}
	return s.snapshotList(r, func(sn *SnapshotRecord) bool { return sn.ResourceType == "volume" && sn.ResourceID == id })
}

// listSnapshots serves GET /v2/snapshots, of droplets and volumes, with
// resource_type= (droplet or volume) and region= (godo's
// ListVolumeSnapshotByRegion) filters.
func (s *Server) listSnapshots(r *http.Request) (int, any) {
	q := r.URL.Query()
	typ, reg := q.Get("resource_type"), q.Get("region")
	if !oneOf(typ, "", "droplet", "volume") {
		return unprocessable("resource_type must be droplet or volume")
	}
	return s.snapshotList(r, func(sn *SnapshotRecord) bool {
		return (typ == "" || sn.ResourceType == typ) && (reg == "" || slices.Contains(sn.Regions, reg))
	})
}

func (s *Server) snapshotList(r *http.Request, keep func(*SnapshotRecord) bool) (int, any) {
	var out []SnapshotRecord
	for _, sn := range s.st.snapshots.All() {
		if keep(sn) {
			out = append(out, sn.clone())
		}
	}
	return list(r, "snapshots", out, s.opts.PerPage)
}

// getSnapshot serves GET /v2/snapshots/{id}.
func (s *Server) getSnapshot(r *http.Request) (int, any) {
	sn, ok := s.st.snapshots.Get(r.PathValue("id"))
	if !ok {
		return notFound()
	}
	return http.StatusOK, map[string]any{"snapshot": sn.clone()}
}

// deleteSnapshot serves DELETE /v2/snapshots/{id}: 204. Volumes made from
// a volume snapshot keep their blocks; the Hypervisor forgets the
// snapshot's (its error is a 500 and the snapshot stays). A droplet
// snapshot leaves the droplet's snapshot_ids.
func (s *Server) deleteSnapshot(r *http.Request) (int, any) {
	st := s.st
	sn, ok := st.snapshots.Get(r.PathValue("id"))
	if !ok {
		return notFound()
	}
	if sn.ResourceType == "volume" {
		if err := s.hypervisor(func(h simkit.Hypervisor) error { return h.DeleteSnapshot(sn.ID) }); err != nil {
			return fail(http.StatusInternalServerError, "failed to delete snapshot: %v", err)
		}
	} else if id, err := strconv.Atoi(sn.ResourceID); err == nil {
		if d, ok := st.droplets[id]; ok {
			n, _ := strconv.Atoi(sn.ID)
			d.SnapshotIDs = slices.DeleteFunc(d.SnapshotIDs, func(x int) bool { return x == n })
		}
	}
	st.snapshots.Del(sn.ID)
	return http.StatusNoContent, nil
}

// addDropletSnapshot records a completed droplet snapshot action: a
// number in the droplet's snapshot_ids and a snapshot of resource_type
// "droplet" (min_disk_size the droplet's disk, size_gigabytes a tenth of
// it) named name, or <droplet name>-<unix ms> as the API names one. The
// caller holds s.mu.
func (s *Server) addDropletSnapshot(d *Droplet, name string) {
	st := s.st
	id := st.nextSnapshot
	st.nextSnapshot++
	d.SnapshotIDs = append(d.SnapshotIDs, id)
	now := st.now().UTC()
	if name == "" {
		name = fmt.Sprintf("%s-%d", d.Name, now.UnixMilli())
	}
	st.snapshots.Put(strconv.Itoa(id), &SnapshotRecord{
		ID: strconv.Itoa(id), Name: name, CreatedAt: now.Format(time.RFC3339), Regions: []string{d.Region.Slug},
		ResourceID: strconv.Itoa(d.ID), ResourceType: "droplet", MinDiskSize: d.Disk,
		SizeGigabytes: float64(d.Disk) / 10, Tags: []string{},
	})
}

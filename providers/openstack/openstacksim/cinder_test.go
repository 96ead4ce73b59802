package openstacksim

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/availabilityzones"
	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/limits"
	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/volumes"
	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/volumetypes"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/volumeattach"
	"github.com/gophercloud/gophercloud/v2/pagination"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// TestVolumeLifecycle: a volume is created "creating" (202) and is
// available on the ProvisioningReads-th read, the Hypervisor making its
// blocks then; deleted, it is "deleting" and gone (404 itemNotFound) on
// the same count, the Hypervisor forgetting it. The requests are counted
// under Cinder's endpoints.
func TestVolumeLifecycle(t *testing.T) {
	hv := &recorder{}
	s, c := setup(t, Options{Hypervisor: hv, ProvisioningReads: 2})
	if !strings.HasPrefix(c.volume.Endpoint, s.URL()+"/volume/v3/") {
		t.Fatalf("block storage endpoint %s", c.volume.Endpoint)
	}
	v := createVolume(t, c.volume, volumes.CreateOpts{Size: 10, Name: "data", Description: "pg", Metadata: map[string]string{"k": "v"}})
	if v.Status != VolumeCreating || v.Size != 10 || v.AvailabilityZone != "nova" || v.VolumeType != "__DEFAULT__" ||
		v.Name != "data" || v.Metadata["k"] != "v" || v.Bootable != "false" || v.Multiattach || len(v.Attachments) != 0 {
		t.Fatalf("created %+v", v)
	}
	hv.Want(t, "before the create settles")
	if got := getVolume(t, c.volume, v.ID); got.Status != VolumeCreating {
		t.Fatalf("first read: %s", got.Status)
	}
	got := getVolume(t, c.volume, v.ID)
	if got.Status != VolumeAvailable || got.TenantID != s.opts.Users[0].ProjectID || got.UserID != s.opts.Users[0].ID ||
		!got.UpdatedAt.After(got.CreatedAt) {
		t.Fatalf("second read: %+v", got)
	}
	hv.Want(t, "create", hvCall{Method: "Create", Disk: disk(v.ID, 10, "")})
	if !strings.HasPrefix(ByIDName(v.ID), "virtio-") || len(ByIDName(v.ID)) != len("virtio-")+20 || !strings.HasPrefix(v.ID, ByIDName(v.ID)[7:]) {
		t.Errorf("ByIDName(%s) = %s", v.ID, ByIDName(v.ID))
	}

	name := "renamed"
	if u, err := volumes.Update(ctx(), c.volume, v.ID, volumes.UpdateOpts{Name: &name}).Extract(); err != nil || u.Name != name {
		t.Fatalf("update: %+v %v", u, err)
	}
	if err := volumes.Delete(ctx(), c.volume, v.ID, nil).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	if got := getVolume(t, c.volume, v.ID); got.Status != VolumeDeleting {
		t.Fatalf("after delete: %s", got.Status)
	}
	_, err := volumes.Get(ctx(), c.volume, v.ID).Extract()
	wantFault(t, err, http.StatusNotFound, "itemNotFound", "Volume "+v.ID+" could not be found.")
	hv.Want(t, "delete", hvCall{Method: "Delete", Disk: disk(v.ID, 10, "")})
	if len(s.Volumes()) != 0 {
		t.Errorf("volumes left: %+v", s.Volumes())
	}
	st := s.Stats()
	for _, op := range []string{
		"POST /volume/v3/{project}/volumes", "GET /volume/v3/{project}/volumes/{id}",
		"PUT /volume/v3/{project}/volumes/{id}", "DELETE /volume/v3/{project}/volumes/{id}",
	} {
		if st[op] == 0 {
			t.Errorf("stats have no %q: %v", op, st)
		}
	}
	if s.Writes() < 3 {
		t.Errorf("writes = %d", s.Writes())
	}
}

// TestVolumeCreateChecks: Cinder's answers to creates it refuses, with
// its messages and fault bodies, and the quota's 413 with Retry-After.
func TestVolumeCreateChecks(t *testing.T) {
	s, c := setup(t, Options{ProvisioningReads: -1, VolumeQuotas: VolumeQuotas{Volumes: 2, Gigabytes: 30}})
	create := func(opts volumes.CreateOpts) error {
		_, err := volumes.Create(ctx(), c.volume, opts, nil).Extract()
		return err
	}
	wantFault(t, create(volumes.CreateOpts{Size: 1, AvailabilityZone: "zone-x"}), 400, "badRequest", "Availability zone 'zone-x' is invalid.")
	wantFault(t, create(volumes.CreateOpts{Size: 1, VolumeType: "gold"}), 404, "itemNotFound", "Volume type with name gold could not be found.")
	wantFault(t, create(volumes.CreateOpts{}), 400, "badRequest", "Invalid input received: Volume size 'None' must be an integer and greater than 0")
	wantFault(t, create(volumes.CreateOpts{Size: 1, SnapshotID: "00000000-0000-4000-8000-000000000000"}), 404, "itemNotFound",
		"Snapshot 00000000-0000-4000-8000-000000000000 could not be found.")
	_, err := volumes.Create(ctx(), c.volume, createBody{"volume": {"size": 1, "multiattach": true}}, nil).Extract()
	wantFault(t, err, 400, "badRequest", "")

	a := createVolume(t, c.volume, volumes.CreateOpts{Size: 20, VolumeType: "multiattach"})
	if a.Status != VolumeAvailable || !a.Multiattach || a.VolumeType != "multiattach" {
		t.Fatalf("multiattach volume with ProvisioningReads -1: %+v", a)
	}
	err = create(volumes.CreateOpts{Size: 11})
	wantFault(t, err, http.StatusRequestEntityTooLarge, "overLimit",
		"Requested volume or snapshot exceeds allowed gigabytes quota. Requested 11G, quota is 30G and 20G has been consumed.")
	var e gophercloud.ErrUnexpectedResponseCode
	if errors.As(err, &e); e.ResponseHeader.Get("Retry-After") != "0" || !strings.Contains(string(e.Body), `"retryAfter":"0"`) {
		t.Errorf("413 without Retry-After: %v %s", e.ResponseHeader, e.Body)
	}
	createVolume(t, c.volume, volumes.CreateOpts{Size: 1})
	wantFault(t, create(volumes.CreateOpts{Size: 1}), http.StatusRequestEntityTooLarge, "overLimit", "Maximum number of volumes allowed (2) exceeded for quota 'volumes'.")
	if n := len(s.Volumes()); n != 2 {
		t.Errorf("%d volumes after refused creates", n)
	}

	// A delete it refuses: in-use (see TestVolumeAttach), or with
	// snapshots; force is an admin's.
	err = volumes.Delete(ctx(), c.volume, a.ID, volumes.DeleteOpts{}).ExtractErr()
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.volume.Delete(ctx(), c.volume.ServiceURL("volumes", "nope"), nil)
	wantFault(t, err, 404, "itemNotFound", "Volume nope could not be found.")
}

// createBody is a raw volume create body, for what CreateOpts cannot say.
type createBody map[string]map[string]any

func (b createBody) ToVolumeCreateMap() (map[string]any, error) {
	out := map[string]any{}
	for k, v := range b {
		out[k] = v
	}
	return out, nil
}

// TestVolumeListPagingAndFilters: Cinder's lists are newest first, paged
// with limit and marker (a next link on every full page, so the last
// page may be empty; an unknown marker 404), filtered by name, status
// and metadata, sorted on request; from 3.31 an unknown filter is 400,
// before it is dropped.
func TestVolumeListPagingAndFilters(t *testing.T) {
	_, c := setup(t, Options{ProvisioningReads: -1})
	var ids []string
	for i, name := range []string{"a", "b", "c", "d", "e"} {
		md := map[string]string{"n": "odd"}
		if i%2 == 1 {
			md["n"] = "even"
		}
		ids = append(ids, createVolume(t, c.volume, volumes.CreateOpts{Size: i + 1, Name: name, Metadata: md}).ID)
	}
	var pages [][]string
	err := volumes.List(c.volume, volumes.ListOpts{Limit: 2}).EachPage(ctx(), func(_ context.Context, p pagination.Page) (bool, error) {
		vs, err := volumes.ExtractVolumes(p)
		var names []string
		for _, v := range vs {
			names = append(names, v.Name)
		}
		pages = append(pages, names)
		return true, err
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := [][]string{{"e", "d"}, {"c", "b"}, {"a"}}; !slices.EqualFunc(pages, want, slices.Equal) {
		t.Errorf("pages %v, want %v", pages, want)
	}
	names := func(opts volumes.ListOpts) []string {
		t.Helper()
		all, err := volumes.List(c.volume, opts).AllPages(ctx())
		if err != nil {
			t.Fatalf("list %+v: %v", opts, err)
		}
		vs, _ := volumes.ExtractVolumes(all)
		var out []string
		for _, v := range vs {
			out = append(out, v.Name)
		}
		return out
	}
	if got := names(volumes.ListOpts{Name: "c"}); !slices.Equal(got, []string{"c"}) {
		t.Errorf("name=c: %v", got)
	}
	if got := names(volumes.ListOpts{Metadata: map[string]string{"n": "even"}}); !slices.Equal(got, []string{"d", "b"}) {
		t.Errorf("metadata n=even: %v", got)
	}
	if got := names(volumes.ListOpts{Status: "available", Sort: "size:asc"}); !slices.Equal(got, []string{"a", "b", "c", "d", "e"}) {
		t.Errorf("sort size:asc: %v", got)
	}
	// A full last page has a next link; the page after it is empty.
	if got := names(volumes.ListOpts{Limit: 5}); len(got) != 5 {
		t.Errorf("limit 5: %v", got)
	}
	_, err = volumes.List(c.volume, volumes.ListOpts{Marker: "nope"}).AllPages(ctx())
	wantFault(t, err, 404, "itemNotFound", "Volume nope could not be found.")
	_, err = volumes.List(atVersion(c.volume, "3.31"), volumes.ListOpts{TenantID: "x"}).AllPages(ctx())
	wantFault(t, err, 400, "badRequest", "Invalid filters project_id are found in query options.")
	if got := names(volumes.ListOpts{TenantID: "x"}); len(got) != 5 {
		t.Errorf("before 3.31 an unknown filter is dropped: %v", got)
	}
	if got := names(volumes.ListOpts{AllTenants: true}); len(got) != 5 {
		t.Errorf("all_tenants is ignored for a member: %v", got)
	}
	_ = ids
}

// TestCinderMicroversions: OpenStack-API-Version: volume 3.x is echoed
// (none is 3.0, latest 3.70), one past 3.70 is 406 and a malformed one
// 400; a URL naming another project is 400; fields come and go with the
// version (volume_type_id at 3.63, consumes_quota at 3.65, group_id at
// 3.13).
func TestCinderMicroversions(t *testing.T) {
	s, c := setup(t, Options{ProvisioningReads: -1})
	v := createVolume(t, c.volume, volumes.CreateOpts{Size: 1})
	get := func(version string) (int, map[string]any, http.Header) {
		var body map[string]any
		opts := &gophercloud.RequestOpts{JSONResponse: &body, OkCodes: []int{200}, MoreHeaders: map[string]string{}}
		if version != "" {
			opts.MoreHeaders["OpenStack-API-Version"] = version
		}
		resp, err := c.volume.Get(ctx(), c.volume.ServiceURL("volumes", v.ID), nil, opts)
		var e gophercloud.ErrUnexpectedResponseCode
		if errors.As(err, &e) {
			return e.Actual, nil, e.ResponseHeader
		}
		if err != nil {
			t.Fatal(err)
		}
		vol, _ := body["volume"].(map[string]any)
		return resp.StatusCode, vol, resp.Header
	}
	for _, tc := range []struct {
		ask, echo string
		status    int
		has, not  []string
	}{
		{"", "volume 3.0", 200, []string{"attachments", "os-vol-tenant-attr:tenant_id"}, []string{"group_id", "volume_type_id", "os-vol-host-attr:host"}},
		{"volume 3.13", "volume 3.13", 200, []string{"group_id"}, []string{"shared_targets"}},
		{"volume 3.63", "volume 3.63", 200, []string{"volume_type_id", "shared_targets", "service_uuid"}, []string{"consumes_quota"}},
		{"volume latest", "volume 3.70", 200, []string{"consumes_quota", "volume_type_id"}, nil},
		{"volume 3.71", "", 406, nil, nil},
		{"volume 3.x", "", 400, nil, nil},
		{"compute 2.1", "", 404, nil, nil},
	} {
		status, vol, h := get(tc.ask)
		if status != tc.status || h.Get("OpenStack-API-Version") != tc.echo {
			t.Errorf("%q: %d %q, want %d %q", tc.ask, status, h.Get("OpenStack-API-Version"), tc.status, tc.echo)
		}
		for _, k := range tc.has {
			if _, ok := vol[k]; !ok {
				t.Errorf("%q: no %s", tc.ask, k)
			}
		}
		for _, k := range tc.not {
			if _, ok := vol[k]; ok {
				t.Errorf("%q: %s shown", tc.ask, k)
			}
		}
	}
	other := strings.Replace(c.volume.ServiceURL("volumes"), s.opts.Users[0].ProjectID, "0123456789abcdef0123456789abcdef", 1)
	_, err := c.volume.Get(ctx(), other, nil, nil)
	wantFault(t, err, 400, "badRequest", "Malformed request url")
}

// TestCinderMinor: an older Cinder (Options.CinderMinor) advertises its
// newest microversion in the version document, serves "latest" as it and
// answers a newer request 406.
func TestCinderMinor(t *testing.T) {
	_, c := setup(t, Options{ProvisioningReads: -1, CinderMinor: 60})
	var doc struct {
		Versions []struct{ Version string } `json:"versions"`
	}
	versions := strings.TrimSuffix(c.volume.ResourceBaseURL(), "/")
	versions = versions[:strings.LastIndex(versions, "/v3/")+len("/v3/")]
	if _, err := c.volume.Get(ctx(), versions, &doc, &gophercloud.RequestOpts{OkCodes: []int{200}}); err != nil {
		t.Fatal(err)
	}
	if len(doc.Versions) != 1 || doc.Versions[0].Version != "3.60" {
		t.Errorf("version document %+v, want 3.60", doc.Versions)
	}
	for ask, want := range map[string]int{"volume 3.60": 200, "volume latest": 200, "volume 3.66": 406} {
		_, err := c.volume.Get(ctx(), c.volume.ServiceURL("types"), nil, &gophercloud.RequestOpts{OkCodes: []int{200},
			MoreHeaders: map[string]string{"OpenStack-API-Version": ask}})
		got := 200
		var e gophercloud.ErrUnexpectedResponseCode
		if errors.As(err, &e) {
			got = e.Actual
		} else if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("%q: %d, want %d", ask, got, want)
		}
	}
}

// TestVolumeTypesZonesLimits: the volume types (the default first,
// "default" naming it; extra specs hidden), the storage zones (nova and
// the servers' zones), the absolute limits with usage, and the quota
// set (another project's is 403).
func TestVolumeTypesZonesLimits(t *testing.T) {
	s, c := setup(t, Options{ProvisioningReads: -1})
	s.AddServer(NovaServer{Name: "z", AZ: "zone-b"})
	all, err := volumetypes.List(c.volume, nil).AllPages(ctx())
	if err != nil {
		t.Fatal(err)
	}
	types, _ := volumetypes.ExtractVolumeTypes(all)
	var names []string
	for _, vt := range types {
		names = append(names, vt.Name)
		if len(vt.ExtraSpecs) != 0 || !vt.IsPublic {
			t.Errorf("type %+v", vt)
		}
	}
	if !slices.Equal(names, []string{"__DEFAULT__", "lvmdriver-1", "multiattach"}) {
		t.Errorf("types %v", names)
	}
	if vt, err := volumetypes.Get(ctx(), c.volume, "default").Extract(); err != nil || vt.Name != "__DEFAULT__" || vt.ID != types[0].ID {
		t.Errorf("default type: %+v %v", vt, err)
	}
	_, err = volumetypes.Get(ctx(), c.volume, "gold").Extract()
	wantFault(t, err, 404, "itemNotFound", "Volume type gold could not be found.")

	zp, err := availabilityzones.List(c.volume).AllPages(ctx())
	if err != nil {
		t.Fatal(err)
	}
	zones, _ := availabilityzones.ExtractAvailabilityZones(zp)
	if len(zones) != 2 || zones[0].ZoneName != "nova" || zones[1].ZoneName != "zone-b" || !zones[1].ZoneState.Available {
		t.Errorf("zones %+v", zones)
	}
	createVolume(t, c.volume, volumes.CreateOpts{Size: 3, AvailabilityZone: "zone-b"})
	l, err := limits.Get(ctx(), c.volume).Extract()
	if err != nil {
		t.Fatal(err)
	}
	if a := l.Absolute; a.MaxTotalVolumes != DefaultVolumeQuotas.Volumes || a.MaxTotalVolumeGigabytes != DefaultVolumeQuotas.Gigabytes ||
		a.TotalVolumesUsed != 1 || a.TotalGigabytesUsed != 3 || a.TotalSnapshotsUsed != 0 {
		t.Errorf("limits %+v", a)
	}
	var qs map[string]map[string]any
	if _, err := c.volume.Get(ctx(), c.volume.ServiceURL("os-quota-sets", s.opts.Users[0].ProjectID)+"?usage=True", &qs, nil); err != nil {
		t.Fatal(err)
	}
	if g, _ := qs["quota_set"]["gigabytes"].(map[string]any); fmt.Sprint(g["in_use"], " ", g["limit"]) != fmt.Sprint(3, " ", DefaultVolumeQuotas.Gigabytes) {
		t.Errorf("quota set %v", qs)
	}
	_, err = c.volume.Get(ctx(), c.volume.ServiceURL("os-quota-sets", "someone-else"), &qs, nil)
	wantFault(t, err, 403, "forbidden", "Policy doesn't allow volume_extension:quotas:show to be performed.")
}

// TestVolumeFaults: the fault machinery covers Cinder's endpoints and
// Nova's attachments by the names Stats uses, with Cinder's fault body;
// "* /volume/*" takes the whole service; a refused request changes
// nothing and is no write.
func TestVolumeFaults(t *testing.T) {
	s, c := setup(t, Options{ProvisioningReads: -1})
	srv := s.AddServer(NovaServer{Name: "node-1"}).ID
	vol, _ := s.AddVolume(Volume{Size: 1})
	writes := s.Writes()
	remove := s.Inject(Fault{Op: "POST /volume/v3/{project}/volumes", Status: http.StatusServiceUnavailable, Count: 1})
	_, err := volumes.Create(ctx(), c.volume, volumes.CreateOpts{Size: 1}, nil).Extract()
	wantFault(t, err, http.StatusServiceUnavailable, "serviceUnavailable", "")
	remove()
	s.Fail(http.StatusConflict, "POST /compute/v2.1/servers/{id}/os-volume_attachments")
	_, err = volumeattach.Create(ctx(), c.compute, srv, volumeattach.CreateOpts{VolumeID: vol.ID}).Extract()
	wantFault(t, err, http.StatusConflict, "conflictingRequest", "")
	if s.Writes() != writes || len(s.Volumes()) != 1 || s.Volumes()[0].Status != VolumeAvailable {
		t.Errorf("a refused request changed something: writes %d -> %d, %+v", writes, s.Writes(), s.Volumes())
	}
	s.ClearFaults()
	s.Fail(http.StatusInternalServerError, "* /volume/*")
	_, err = volumes.Get(ctx(), c.volume, vol.ID).Extract()
	wantFault(t, err, http.StatusInternalServerError, "computeFault", "")
	s.ClearFaults()
	s.RateLimit(0, "GET /volume/v3/{project}/volumes/detail")
	_, err = volumes.List(c.volume, nil).AllPages(ctx())
	wantFault(t, err, http.StatusTooManyRequests, "overLimit", "")
}

// TestVolumeURLsWithoutProject: since 3.67 Cinder takes its URLs without
// the project ID too, counted as the same endpoint.
func TestVolumeURLsWithoutProject(t *testing.T) {
	s, c := setup(t, Options{ProvisioningReads: -1})
	v := createVolume(t, c.volume, volumes.CreateOpts{Size: 1})
	bare := *c.volume
	bare.Endpoint = s.URL() + "/volume/v3/"
	bare.ResourceBase = ""
	if got := getVolume(t, &bare, v.ID); got.ID != v.ID {
		t.Errorf("volume without project ID: %+v", got)
	}
	all, err := volumes.List(&bare, volumes.ListOpts{Limit: 1}).AllPages(ctx())
	if err != nil {
		t.Fatal(err)
	}
	if vs, _ := volumes.ExtractVolumes(all); len(vs) != 1 {
		t.Errorf("list without project ID: %+v", vs)
	}
	if n := s.Stats()["GET /volume/v3/{project}/volumes/{id}"]; n != 1 {
		t.Errorf("counted %d times", n)
	}
	_, err = bare.Get(ctx(), bare.ServiceURL("nothing"), nil, nil)
	wantCode(t, err, http.StatusNotFound)
}

// TestVolumesSettleAfterAndOtherProject: with Common.SettleAfter a
// volume settles with time, read or not; the other project has its own
// Cinder endpoint (its project in the catalog URL), and this project's
// volumes are 404 there, by distinct IDs.
func TestVolumesSettleAfterAndOtherProject(t *testing.T) {
	opts := Options{ProvisioningReads: 1000}
	opts.SettleAfter = 5 * time.Millisecond
	s, c := setup(t, opts)
	v := createVolume(t, c.volume, volumes.CreateOpts{Size: 1})
	simkit.WaitFor(t, "volume available with time", func() bool {
		vs := s.Volumes()
		return len(vs) == 1 && vs[0].Status == VolumeAvailable
	})
	s.OtherProject()
	other := connect(t, s, otherPasswordAuth(s))
	if other.volume.Endpoint == c.volume.Endpoint || !strings.Contains(other.volume.Endpoint, s.OtherProject().opts.Users[0].ProjectID) {
		t.Errorf("the other project's endpoint %s", other.volume.Endpoint)
	}
	_, err := volumes.Get(ctx(), other.volume, v.ID).Extract()
	wantFault(t, err, 404, "itemNotFound", "Volume "+v.ID+" could not be found.")
	theirs := createVolume(t, other.volume, volumes.CreateOpts{Size: 1})
	if theirs.ID == v.ID {
		t.Errorf("the projects' volumes share the ID %s", v.ID)
	}
}

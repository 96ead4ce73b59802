package tritonsim

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/netip"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/joyent/triton-go/client"
	"github.com/joyent/triton-go/compute"
	tritonerrors "github.com/joyent/triton-go/errors"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// tritonAPIError is the APIError under triton-go's wrapping of err, failing
// the test when there is none.
func tritonAPIError(t *testing.T, err error) *tritonerrors.APIError {
	t.Helper()
	// github.com/pkg/errors v0.8's Cause, which triton-go wraps with.
	var c interface{ Cause() error }
	for errors.As(err, &c) {
		err = c.Cause()
	}
	var ae *tritonerrors.APIError
	if !errors.As(err, &ae) {
		t.Fatalf("err = %v, want an APIError", err)
	}
	return ae
}

// wantVolumeError fails unless err is triton-go's APIError with status
// and code and a message holding msg.
func wantVolumeError(t *testing.T, err error, status int, code, msg string) {
	t.Helper()
	wantAPIError(t, err, status, code)
	if ae := tritonAPIError(t, err); !strings.Contains(ae.Message, msg) {
		t.Fatalf("message %q, want it to hold %q", ae.Message, msg)
	}
}

// getQuery is a GET of path with query, through triton-go's own client.
func getQuery(t *testing.T, c clients, path, query string, into any) (*http.Response, error) {
	t.Helper()
	q, err := url.ParseQuery(query)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.compute.Client.ExecuteRequestRaw(ctx(), client.RequestInput{Method: http.MethodGet, Path: path, Query: &q})
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if into != nil {
		if err := json.NewDecoder(resp.Body).Decode(into); err != nil {
			t.Fatalf("GET %s?%s: %v", path, query, err)
		}
	}
	return resp, nil
}

func createVolume(t *testing.T, c clients, in compute.CreateVolumeInput) *compute.Volume {
	t.Helper()
	if in.Type == "" {
		in.Type = VolumeTypeNFS
	}
	v, err := c.compute.Volumes().Create(ctx(), &in)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func getVolume(t *testing.T, c clients, id string) *compute.Volume {
	t.Helper()
	v, err := c.compute.Volumes().Get(ctx(), &compute.GetVolumeInput{ID: id})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func fabricID(t *testing.T, s *Server) string {
	t.Helper()
	for _, n := range s.State().Networks {
		if n.Name == FabricNetworkName {
			return n.ID
		}
	}
	t.Fatal("no default fabric network")
	return ""
}

var nfsPath = regexp.MustCompile(`^(10\.200\.\d+\.\d+):/zones/[0-9a-f-]{36}/data$`)

// TestCreateVolumeDefaults: a create naming only the type gets the
// smallest size, the account's default fabric network and a generated
// name; it is creating, without filesystem_path, until its reads settle
// it ready with one on that network.
func TestCreateVolumeDefaults(t *testing.T) {
	s, c := setup(t, Options{ProvisioningReads: 2})
	v := createVolume(t, c, compute.CreateVolumeInput{})
	if v.State != VolumeCreating || v.Size != DefaultVolumeSize || v.Type != VolumeTypeNFS || v.FileSystemPath != "" {
		t.Fatalf("created %+v", v)
	}
	if !slices.Equal(v.Networks, []string{fabricID(t, s)}) || v.Owner != s.AccountID() || v.Refs != nil || v.Tags != nil {
		t.Fatalf("created %+v", v)
	}
	if !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(v.Name) || !strings.HasPrefix(v.Name, strings.ReplaceAll(v.ID, "-", "")) {
		t.Fatalf("generated name %q for %s", v.Name, v.ID)
	}
	if got := getVolume(t, c, v.ID); got.State != VolumeCreating {
		t.Fatalf("after one read: %+v", got)
	}
	got := getVolume(t, c, v.ID)
	m := nfsPath.FindStringSubmatch(got.FileSystemPath)
	if got.State != VolumeReady || m == nil || !netip.MustParsePrefix("10.200.0.0/16").Contains(netip.MustParseAddr(m[1])) {
		t.Fatalf("after two reads: %+v", got)
	}
	if _, ok := s.VolumeExportDir(v.ID); !ok {
		t.Fatal("no export for the ready volume")
	}
}

// TestCreateVolumeSizesAndNetworks: only the sizes ListVolumeSizes gives
// are taken (409 VolumeSizeNotAvailable naming them otherwise), and only
// fabric networks of the account.
func TestCreateVolumeSizesAndNetworks(t *testing.T) {
	s, c := setup(t, Options{ProvisioningReads: -1})
	var sizes []struct {
		Size int64  `json:"size"`
		Type string `json:"type"`
	}
	if _, err := getQuery(t, c, "/my/volumesizes", "type=tritonnfs", &sizes); err != nil {
		t.Fatal(err)
	}
	if len(sizes) != 19 || sizes[0].Size != 10240 || sizes[1].Size != 20480 || sizes[18].Size != 1024000 || sizes[0].Type != VolumeTypeNFS {
		t.Fatalf("sizes %+v", sizes)
	}
	_, err := getQuery(t, c, "/my/volumesizes", "type=zfs", nil)
	wantVolumeError(t, err, http.StatusConflict, "InvalidArgument", "Error: Invalid volume type: zfs. Volume type should be one of: tritonnfs")

	if v := createVolume(t, c, compute.CreateVolumeInput{Name: "big", Size: 204800}); v.Size != 204800 || v.State != VolumeReady {
		t.Fatalf("created %+v", v)
	}
	_, err = c.compute.Volumes().Create(ctx(), &compute.CreateVolumeInput{Name: "odd", Type: VolumeTypeNFS, Size: 15000})
	wantVolumeError(t, err, http.StatusConflict, "VolumeSizeNotAvailable",
		"Error when creating volume: Volume size 15000 is not available. Available sizes are: 10240, 20480, 30720,")
	_, err = call(t, c, http.MethodPost, "/my/volumes", map[string]any{"type": VolumeTypeNFS, "size": "10240"}, nil)
	wantVolumeError(t, err, http.StatusConflict, "InvalidArgument", "Error: Invalid volume size: 10240")
	_, err = call(t, c, http.MethodPost, "/my/volumes", map[string]any{"type": VolumeTypeNFS, "size": -1}, nil)
	wantVolumeError(t, err, http.StatusConflict, "InvalidArgument", "Error: Invalid volume size: -1")

	var public string
	for _, n := range s.State().Networks {
		if n.Public {
			public = n.ID
		}
	}
	other := s.AddNetwork(Network{Name: "second-fabric", Fabric: true, VLAN: 3})
	v := createVolume(t, c, compute.CreateVolumeInput{Name: "two-nets", Networks: []string{other.ID, fabricID(t, s)}})
	host, _, _ := strings.Cut(getVolume(t, c, v.ID).FileSystemPath, ":")
	if !slices.Equal(v.Networks, []string{other.ID, fabricID(t, s)}) || !netip.MustParsePrefix(other.Subnet).Contains(netip.MustParseAddr(host)) {
		t.Fatalf("created %+v; its NFS server is on the first network, %s", getVolume(t, c, v.ID), other.Subnet)
	}
	for _, nets := range [][]string{{public}, {"5b0e2ed6-1c2f-4b8e-8c4c-1f6f0c0c0c0c"}, {fabricID(t, s), public}} {
		_, err = c.compute.Volumes().Create(ctx(), &compute.CreateVolumeInput{Type: VolumeTypeNFS, Networks: nets})
		wantVolumeError(t, err, http.StatusConflict, "InvalidArgument", "Invalid networks: "+strings.Join(nets, ","))
	}
	_, err = call(t, c, http.MethodPost, "/my/volumes", map[string]any{"type": VolumeTypeNFS, "networks": "x"}, nil)
	wantVolumeError(t, err, http.StatusConflict, "InvalidArgument", "Error: Invalid networks: networks must be an array")
	_, err = call(t, c, http.MethodPost, "/my/volumes", map[string]any{"type": VolumeTypeNFS, "networks": []string{}}, nil)
	wantVolumeError(t, err, http.StatusConflict, "ValidationError", "networks must be a non-empty array")

	s2, c2 := setup(t, Options{VolumeSizes: []int64{51200, 20480}})
	_, err = c2.compute.Volumes().Create(ctx(), &compute.CreateVolumeInput{Type: VolumeTypeNFS, Size: 10240})
	wantVolumeError(t, err, http.StatusConflict, "VolumeSizeNotAvailable", "Available sizes are: 20480, 51200")
	if v := createVolume(t, c2, compute.CreateVolumeInput{}); v.Size != 20480 {
		t.Fatalf("default size %d, want the smallest, 20480", v.Size)
	}
	if len(s2.Volumes()) != 1 {
		t.Fatalf("volumes %+v", s2.Volumes())
	}
}

// TestCreateVolumeValidation: names, the type and tags as CloudAPI
// checks them, and a name a creating or ready volume has (409
// VolumeAlreadyExists) — not a failed one's.
func TestCreateVolumeValidation(t *testing.T) {
	s, c := setup(t, Options{ProvisioningReads: -1})
	for _, name := range []string{"-foo", ".foo", "a", "has space", strings.Repeat("x", 257)} {
		_, err := call(t, c, http.MethodPost, "/my/volumes", map[string]any{"type": VolumeTypeNFS, "name": name}, nil)
		wantVolumeError(t, err, http.StatusConflict, "InvalidArgument", "Error: Invalid volume name")
	}
	_, err := c.compute.Volumes().Create(ctx(), &compute.CreateVolumeInput{Name: "no-type"})
	wantVolumeError(t, err, http.StatusConflict, "InvalidArgument",
		"Error: Invalid volume type: undefined. Volume type should be one of: tritonnfs")
	_, err = call(t, c, http.MethodPost, "/my/volumes", map[string]any{"type": VolumeTypeNFS, "tags": map[string]any{"a": 1}}, nil)
	wantVolumeError(t, err, http.StatusConflict, "InvalidArgument", "Error: Invalid tags: tags must be an object of key/value strings")

	v := createVolume(t, c, compute.CreateVolumeInput{Name: "data", Tags: map[string]string{"role": "db"}})
	if v.Name != "data" || v.Tags["role"] != "db" {
		t.Fatalf("created %+v", v)
	}
	_, err = c.compute.Volumes().Create(ctx(), &compute.CreateVolumeInput{Name: "data", Type: VolumeTypeNFS})
	wantVolumeError(t, err, http.StatusConflict, "VolumeAlreadyExists", "Error when creating volume: Volume with name data already exists")
	if found, err := s.SetVolumeState(v.ID, VolumeFailed); !found || err != nil {
		t.Fatal(found, err)
	}
	if again := createVolume(t, c, compute.CreateVolumeInput{Name: "data"}); again.ID == v.ID {
		t.Fatal("the name of a failed volume was not free")
	}
}

// TestListVolumesFilters: name (exact, prefix*, *suffix, *infix*), size,
// state and type filters, all of which must match; failed volumes only
// when state is given; invalid filters and unknown parameters 409.
func TestListVolumesFilters(t *testing.T) {
	s, c := setup(t, Options{ProvisioningReads: -1})
	for _, in := range []compute.CreateVolumeInput{{Name: "web-data"}, {Name: "web-logs", Size: 20480}, {Name: "db-data"}} {
		createVolume(t, c, in)
	}
	s.FailNextVolumes(1)
	failed := createVolume(t, c, compute.CreateVolumeInput{Name: "web-broken"})
	list := func(in compute.ListVolumesInput) []string {
		t.Helper()
		vs, err := c.compute.Volumes().List(ctx(), &in)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, v := range vs {
			names = append(names, v.Name)
		}
		return names
	}
	for _, tc := range []struct {
		in   compute.ListVolumesInput
		want []string
	}{
		{compute.ListVolumesInput{}, []string{"web-data", "web-logs", "db-data"}},
		{compute.ListVolumesInput{Name: "web-data"}, []string{"web-data"}},
		{compute.ListVolumesInput{Name: "web*"}, []string{"web-data", "web-logs"}},
		{compute.ListVolumesInput{Name: "*data"}, []string{"web-data", "db-data"}},
		{compute.ListVolumesInput{Name: "*b-*"}, []string{"web-data", "web-logs", "db-data"}},
		{compute.ListVolumesInput{Size: "20480"}, []string{"web-logs"}},
		{compute.ListVolumesInput{Name: "web*", Size: "10240"}, []string{"web-data"}},
		{compute.ListVolumesInput{State: VolumeFailed}, []string{"web-broken"}},
		{compute.ListVolumesInput{State: VolumeReady, Type: VolumeTypeNFS}, []string{"web-data", "web-logs", "db-data"}},
		{compute.ListVolumesInput{Name: "nothing"}, nil},
	} {
		if got := list(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("List(%+v) = %v, want %v", tc.in, got, tc.want)
		}
	}
	if got := getVolume(t, c, failed.ID); got.State != VolumeFailed || got.FileSystemPath != "" {
		t.Fatalf("failed volume %+v", got)
	}
	for _, tc := range []struct{ query, msg string }{
		{"state=gone", "Error: Volume state: gone is invalid"},
		{"size=0", "Error: invalid value for size search parameter, must match /^[1-9][0-9]*$/"},
		{"type=zfs", "Error: Invalid volume type: zfs"},
		{"name=a%20b", "Error: invalid value for name search parameter"},
		{"limit=3", "Error: invalid parameter: limit"},
		{"predicate=%7B%7D", "predicate parameter is not simulated"},
	} {
		_, err := getQuery(t, c, "/my/volumes", tc.query, nil)
		wantVolumeError(t, err, http.StatusConflict, "InvalidArgument", tc.msg)
	}
	resp, err := call(t, c, http.MethodGet, "/my/volumes", nil, nil)
	if err != nil || resp.Header.Get("X-Resource-Count") != "3" {
		t.Fatalf("X-Resource-Count %q, %v", resp.Header.Get("X-Resource-Count"), err)
	}
}

// TestDeleteVolume: refused (409 VolumeInUse) while an active machine
// refers to the volume; then deleting, and gone on its reads: Get and
// Delete then fail with triton-go's APIError 404 VolumeNotFound — not
// ResourceNotFound, and under github.com/pkg/errors wrapping that the
// standard errors package does not see through (the trap a CSI provider
// must handle itself: triton-go's own 404 branch in Delete is dead code).
func TestDeleteVolume(t *testing.T) {
	s, c := setup(t, Options{ProvisioningReads: 2, GoneReads: -1})
	v := createVolume(t, c, compute.CreateVolumeInput{Name: "shared"})
	s.Advance()
	m := s.AddMachine(Machine{Name: "user"})
	stopped := s.AddMachine(Machine{Name: "stopped", State: StateStopped})
	if !s.AddVolumeRef(v.ID, m.ID) || !s.AddVolumeRef(v.ID, stopped.ID) || s.AddVolumeRef(v.ID, "no-such-machine") {
		t.Fatal("AddVolumeRef")
	}
	if got := getVolume(t, c, v.ID); !slices.Equal(got.Refs, []string{m.ID, stopped.ID}) {
		t.Fatalf("refs %v", got.Refs)
	}
	err := c.compute.Volumes().Delete(ctx(), &compute.DeleteVolumeInput{ID: v.ID})
	wantVolumeError(t, err, http.StatusConflict, "VolumeInUse",
		"Error when deleting volume: Volume with name shared is used by vms: "+m.ID+", "+stopped.ID)
	s.DeleteMachine(m.ID)
	s.SetMachineState(stopped.ID, StateFailed) // a failed machine is no active user
	if got := getVolume(t, c, v.ID); !slices.Equal(got.Refs, []string{stopped.ID}) {
		t.Fatalf("refs after the machine's deletion %v", got.Refs)
	}
	if err := c.compute.Volumes().Delete(ctx(), &compute.DeleteVolumeInput{ID: v.ID}); err != nil {
		t.Fatal(err)
	}
	if got := getVolume(t, c, v.ID); got.State != VolumeDeleting {
		t.Fatalf("after Delete: %+v", got)
	}
	if err := c.compute.Volumes().Delete(ctx(), &compute.DeleteVolumeInput{ID: v.ID}); err != nil {
		t.Fatalf("Delete of a deleting volume: %v", err)
	}
	got, err := c.compute.Volumes().Get(ctx(), &compute.GetVolumeInput{ID: v.ID})
	if got != nil {
		t.Fatalf("Get of the deleted volume = %+v", got)
	}
	wantVolumeError(t, err, http.StatusNotFound, "VolumeNotFound",
		"Error when getting volume: Volume with uuid "+v.ID+" could not be found")
	err = c.compute.Volumes().Delete(ctx(), &compute.DeleteVolumeInput{ID: v.ID})
	wantVolumeError(t, err, http.StatusNotFound, "VolumeNotFound",
		"Error when deleting volume: Volume with uuid "+v.ID+" could not be found")

	// What a provider can and cannot rely on to tell not-found.
	var ae *tritonerrors.APIError
	if errors.As(err, &ae) {
		t.Error("errors.As sees through triton-go's pkg/errors v0.8 wrapping; the doc comment is stale")
	}
	if !strings.HasPrefix(err.Error(), "unable to delete volume: VolumeNotFound: ") {
		t.Errorf("err.Error() = %q", err.Error())
	}
	if !tritonerrors.IsSpecificError(err, "VolumeNotFound") || !tritonerrors.IsStatusNotFoundCode(err) || tritonerrors.IsResourceNotFound(err) {
		t.Error("triton-go's helpers: want IsSpecificError(VolumeNotFound) and IsStatusNotFoundCode, not IsResourceNotFound")
	}
	if _, found := s.Volume(v.ID); found || len(s.Volumes()) != 0 {
		t.Fatal("the deleted volume is still held")
	}

	_, err = c.compute.Volumes().Get(ctx(), &compute.GetVolumeInput{ID: "not-a-uuid"})
	wantVolumeError(t, err, http.StatusConflict, "InvalidArgument", "Error: Invalid volume ID: not-a-uuid. Volume ID should match")
}

// TestDeleteCreatingVolume: a volume deleted while it is created goes,
// and never becomes ready.
func TestDeleteCreatingVolume(t *testing.T) {
	s, c := setup(t, Options{ProvisioningReads: 3})
	v := createVolume(t, c, compute.CreateVolumeInput{})
	if err := c.compute.Volumes().Delete(ctx(), &compute.DeleteVolumeInput{ID: v.ID}); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Volume(v.ID); got.State != VolumeDeleting {
		t.Fatalf("state %q", got.State)
	}
	s.Advance()
	if _, found := s.Volume(v.ID); found {
		t.Fatal("the volume did not go")
	}
}

// TestUpdateVolume: a rename, refused for a name in use (the volume's own
// included, as VOLAPI checks) and while any machine refers to it.
func TestUpdateVolume(t *testing.T) {
	s, c := setup(t, Options{ProvisioningReads: -1})
	v := createVolume(t, c, compute.CreateVolumeInput{Name: "old"})
	createVolume(t, c, compute.CreateVolumeInput{Name: "taken"})
	if err := c.compute.Volumes().Update(ctx(), &compute.UpdateVolumeInput{ID: v.ID, Name: "new"}); err != nil {
		t.Fatal(err)
	}
	if got := getVolume(t, c, v.ID); got.Name != "new" {
		t.Fatalf("renamed %+v", got)
	}
	for _, name := range []string{"taken", "new"} {
		err := c.compute.Volumes().Update(ctx(), &compute.UpdateVolumeInput{ID: v.ID, Name: name})
		wantVolumeError(t, err, http.StatusConflict, "VolumeAlreadyExists", "Error when updating volume: Volume with name "+name+" already exists")
	}
	err := c.compute.Volumes().Update(ctx(), &compute.UpdateVolumeInput{ID: v.ID, Name: "-bad"})
	wantVolumeError(t, err, http.StatusConflict, "InvalidArgument", "Error: Invalid volume name: -bad")
	m := s.AddMachine(Machine{})
	s.AddVolumeRef(v.ID, m.ID)
	err = c.compute.Volumes().Update(ctx(), &compute.UpdateVolumeInput{ID: v.ID, Name: "newer"})
	wantVolumeError(t, err, http.StatusConflict, "VolumeInUse", "Volume with name new is used by vms: "+m.ID)
	err = c.compute.Volumes().Update(ctx(), &compute.UpdateVolumeInput{ID: "5b0e2ed6-1c2f-4b8e-8c4c-1f6f0c0c0c0c", Name: "x1"})
	wantVolumeError(t, err, http.StatusNotFound, "VolumeNotFound", "Error when updating volume")
}

// TestVolumeFaults: an injected fault answers in CloudAPI's error shape;
// FailNextVolumes makes a created volume settle failed, which Delete
// still removes.
func TestVolumeFaults(t *testing.T) {
	s, c := setup(t, Options{ProvisioningReads: 1})
	s.Inject(Fault{Op: "POST /{account}/volumes", Status: http.StatusServiceUnavailable, Count: 1})
	_, err := c.compute.Volumes().Create(ctx(), &compute.CreateVolumeInput{Type: VolumeTypeNFS})
	wantAPIError(t, err, http.StatusServiceUnavailable, "ServiceUnavailable")
	if len(s.Volumes()) != 0 {
		t.Fatal("a failed create made a volume")
	}
	s.Inject(Fault{Op: "GET /{account}/volumes/{id}", Status: http.StatusInternalServerError, Count: 1})
	v := createVolume(t, c, compute.CreateVolumeInput{})
	_, err = c.compute.Volumes().Get(ctx(), &compute.GetVolumeInput{ID: v.ID})
	wantAPIError(t, err, http.StatusInternalServerError, "InternalError")
	if got := getVolume(t, c, v.ID); got.State != VolumeReady {
		t.Fatalf("the faulted read counted: %+v", got)
	}

	s.FailNextVolumes(1)
	bad := createVolume(t, c, compute.CreateVolumeInput{Name: "bad"})
	if got := getVolume(t, c, bad.ID); got.State != VolumeFailed {
		t.Fatalf("state %q, want failed", got.State)
	}
	if _, ok := s.VolumeExportDir(bad.ID); ok {
		t.Fatal("a failed volume has an export")
	}
	if ok := createVolume(t, c, compute.CreateVolumeInput{Name: "good"}); getVolume(t, c, ok.ID).State != VolumeReady {
		t.Fatal("FailNextVolumes(1) failed more than one")
	}
	if err := c.compute.Volumes().Delete(ctx(), &compute.DeleteVolumeInput{ID: bad.ID}); err != nil {
		t.Fatal(err)
	}
	s.Advance()
	if _, found := s.Volume(bad.ID); found {
		t.Fatal("the failed volume was not deleted")
	}
}

// TestVolumesAccounts: the other account does not see this one's volumes
// (404 VolumeNotFound, as VOLAPI checks the owner), and this account's
// path is 403 to it; with NoVolumes the endpoints are 404
// ResourceNotFound, which a provider must not take for a gone volume.
func TestVolumesAccounts(t *testing.T) {
	s, c := setup(t, Options{ProvisioningReads: -1})
	v := createVolume(t, c, compute.CreateVolumeInput{Name: "mine"})
	o := s.OtherAccountServer()
	other := computeAs(t, s, OtherAccountLogin, signerOf(t, o))
	_, err := other.Volumes().Get(ctx(), &compute.GetVolumeInput{ID: v.ID})
	wantAPIError(t, err, http.StatusNotFound, "VolumeNotFound")
	err = other.Volumes().Delete(ctx(), &compute.DeleteVolumeInput{ID: v.ID})
	wantAPIError(t, err, http.StatusNotFound, "VolumeNotFound")
	theirs, err := other.Volumes().Create(ctx(), &compute.CreateVolumeInput{Name: "mine", Type: VolumeTypeNFS})
	if err != nil || theirs.Owner != o.AccountID() || theirs.Networks[0] == fabricID(t, s) {
		t.Fatalf("the other account's create: %+v, %v", theirs, err)
	}
	if len(s.Volumes()) != 1 || len(o.Volumes()) != 1 {
		t.Fatal("the accounts' volumes mixed")
	}
	_, err = call(t, c, http.MethodGet, "/"+OtherAccountLogin+"/volumes", nil, nil)
	wantAPIError(t, err, http.StatusForbidden, "NotAuthorized")

	_, nc := setup(t, Options{NoVolumes: true})
	_, err = nc.compute.Volumes().Get(ctx(), &compute.GetVolumeInput{ID: v.ID})
	wantAPIError(t, err, http.StatusNotFound, "ResourceNotFound")
	if tritonerrors.IsSpecificError(err, "VolumeNotFound") {
		t.Fatal("no volumes reads as a gone volume")
	}
}

// TestCreateMachineWithVolumes: CreateMachine's volumes make the machine
// a ref of a ready volume of that name, or of one created for it on its
// fabric network, as VMAPI's workflow does; a ready volume on none of its
// networks is 409 VolumesNotReachable; without volumes enabled, 409.
func TestCreateMachineWithVolumes(t *testing.T) {
	s, c := setup(t, Options{ProvisioningReads: -1})
	v := createVolume(t, c, compute.CreateVolumeInput{Name: "shared"})
	image := imageID(t, c, "base-64-lts")
	m, err := c.compute.Instances().Create(ctx(), &compute.CreateInstanceInput{Package: DefaultPackage, Image: image,
		Volumes: []compute.InstanceVolume{{Name: "shared", Mountpoint: "/data"}, {Name: "fresh", Type: VolumeTypeNFS, Mode: "ro", Mountpoint: "/fresh"}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := getVolume(t, c, v.ID); !slices.Equal(got.Refs, []string{m.ID}) {
		t.Fatalf("refs %v", got.Refs)
	}
	fresh, err := c.compute.Volumes().List(ctx(), &compute.ListVolumesInput{Name: "fresh"})
	if err != nil || len(fresh) != 1 || !slices.Equal(fresh[0].Refs, []string{m.ID}) || !slices.Equal(fresh[0].Networks, []string{fabricID(t, s)}) {
		t.Fatalf("the volume made for the machine: %+v, %v", fresh, err)
	}
	err = c.compute.Volumes().Delete(ctx(), &compute.DeleteVolumeInput{ID: v.ID})
	wantAPIError(t, err, http.StatusConflict, "VolumeInUse")
	if err := c.compute.Instances().Delete(ctx(), &compute.DeleteInstanceInput{ID: m.ID}); err != nil {
		t.Fatal(err)
	}
	if err := c.compute.Volumes().Delete(ctx(), &compute.DeleteVolumeInput{ID: v.ID}); err != nil {
		t.Fatalf("Delete after the machine's: %v", err)
	}

	apart := s.AddNetwork(Network{Name: "apart", Fabric: true, VLAN: 4})
	createVolume(t, c, compute.CreateVolumeInput{Name: "far", Networks: []string{apart.ID}})
	_, err = c.compute.Instances().Create(ctx(), &compute.CreateInstanceInput{Package: DefaultPackage, Image: image,
		Volumes: []compute.InstanceVolume{{Name: "far", Mountpoint: "/far"}}})
	wantVolumeError(t, err, http.StatusConflict, "VolumesNotReachable", "Volume far not reachable on networks")
	_, err = c.compute.Instances().Create(ctx(), &compute.CreateInstanceInput{Package: DefaultPackage, Image: image,
		Volumes: []compute.InstanceVolume{{Name: "x", Mountpoint: "relative"}}})
	wantVolumeError(t, err, http.StatusConflict, "InvalidArgument", "invalid mount point for volume x")

	_, nc := setup(t, Options{NoVolumes: true})
	_, err = nc.compute.Instances().Create(ctx(), &compute.CreateInstanceInput{Package: DefaultPackage, Image: image,
		Volumes: []compute.InstanceVolume{{Name: "shared", Mountpoint: "/data"}}})
	wantVolumeError(t, err, http.StatusConflict, "InvalidArgument", "Support for automounting volumes is not enabled")
}

// TestVolumesSettleWithTime: with Options.SettleAfter a volume becomes
// ready, and a deleted one goes, though nobody reads it.
func TestVolumesSettleWithTime(t *testing.T) {
	s, c := setup(t, Options{Common: simkit.Common{SettleAfter: 5 * time.Millisecond}, ProvisioningReads: 1000})
	v := createVolume(t, c, compute.CreateVolumeInput{})
	simkit.WaitFor(t, "the volume to be ready", func() bool { got, _ := s.Volume(v.ID); return got.State == VolumeReady })
	if err := c.compute.Volumes().Delete(ctx(), &compute.DeleteVolumeInput{ID: v.ID}); err != nil {
		t.Fatal(err)
	}
	simkit.WaitFor(t, "the volume to go", func() bool { _, found := s.Volume(v.ID); return !found })
}

// TestAddVolume seeds volumes in each state; State shows them.
func TestAddVolume(t *testing.T) {
	s, c := setup(t, Options{ProvisioningReads: 1})
	ready, err := s.AddVolume(Volume{Name: "seeded", Size: 30720, Tags: map[string]string{"k": "v"}})
	if err != nil || ready.State != VolumeReady || !nfsPath.MatchString(ready.FilesystemPath) || ready.Owner != s.AccountID() {
		t.Fatalf("AddVolume = %+v, %v", ready, err)
	}
	creating, err := s.AddVolume(Volume{State: VolumeCreating})
	if err != nil || creating.FilesystemPath != "" {
		t.Fatalf("AddVolume = %+v, %v", creating, err)
	}
	if got := getVolume(t, c, creating.ID); got.State != VolumeReady {
		t.Fatalf("the seeded creating volume did not settle: %+v", got)
	}
	if _, err := s.AddVolume(Volume{Networks: []string{"nope"}}); err == nil {
		t.Fatal("AddVolume took an unknown network")
	}
	if _, err := s.AddVolume(Volume{State: "deleted"}); err == nil {
		t.Fatal("AddVolume took state deleted")
	}
	if got := s.State().Volumes; len(got) != 2 || got[0].Name != "seeded" {
		t.Fatalf("State().Volumes = %+v", got)
	}
}

package csidriver

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/joyent/triton-go/client"
	"github.com/joyent/triton-go/compute"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"k8s.io/klog/v2"

	"github.com/ccmkit/ccmkit/framework/cloudapi"
	"github.com/ccmkit/ccmkit/framework/csi"
	"github.com/ccmkit/ccmkit/providers/triton/internal/cloud"
)

// A volume's states (RFD 26 "Volume objects"): creating until its storage
// zone runs, then ready, or failed; deleting once deleted, until it is
// gone (then CloudAPI answers 404 VolumeNotFound).
const (
	volumeCreating = "creating"
	volumeReady    = "ready"
	volumeFailed   = "failed"
	volumeDeleting = "deleting"
)

// CloudAPI's error codes for volumes: VOLAPI's, which CloudAPI passes on
// (sdc-volapi lib/errors.js).
const (
	codeVolumeNotFound = "VolumeNotFound"
	codeVolumeInUse    = "VolumeInUse"
	codeVolumeExists   = "VolumeAlreadyExists"
	codeVolumeSize     = "VolumeSizeNotAvailable"
	codeNoDefaultFab   = "DefaultFabricNetworkNotConfiguredError"
)

// ContextFilesystemPath is the volume_context key of a volume's NFS
// export, CloudAPI's filesystem_path ("<ip>:/zones/<uuid>/data"): what the
// node mounts. A PersistentVolume written by hand for an existing volume
// sets it in volumeAttributes.
const ContextFilesystemPath = "filesystem_path"

// rfd26Sizes are the sizes, in MiB, of a stock Triton's sdc_volume_nfs_*
// packages (RFD 26 "Packages sizes"): 10 to 100 GiB by 10, then 200 to
// 1000 GiB by 100. A controller reads its datacenter's (ListVolumeSizes).
var rfd26Sizes = func() []int64 {
	var out []int64
	for g := int64(10); g <= 100; g += 10 {
		out = append(out, g*1024)
	}
	for g := int64(200); g <= 1000; g += 100 {
		out = append(out, g*1024)
	}
	return out
}()

// maxVolumeName is the longest volume name the driver gives (CloudAPI
// takes at most 256 characters).
const maxVolumeName = 256

// volumeNamePattern is what CloudAPI takes as a volume's name
// (lib/validation/volumes.js: /^[a-z0-9][\w.-]+$/i).
var volumeNamePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]+$`)

// volumeName is the Triton name of the volume a CSI CreateVolume names:
// the CSI name itself (external-provisioner's pvc-<UID>) when CloudAPI
// takes it, or else its characters CloudAPI takes (others made '-'),
// within the length, and a hash of the whole. The same CSI name always
// gives the same volume name, for the lookup by name; names are unique
// per account.
func volumeName(csiName string) string {
	if len(csiName) <= maxVolumeName && volumeNamePattern.MatchString(csiName) {
		return csiName
	}
	clean := []byte(csiName)
	for i, c := range clean {
		if !volumeNameChar(c) {
			clean[i] = '-'
		}
	}
	sum := sha256.Sum256([]byte(csiName))
	suffix := "-" + hex.EncodeToString(sum[:6])
	name := string(clean[:min(len(clean), maxVolumeName-len(suffix)-1)])
	if name == "" || !volumeNamePattern.MatchString(name[:1]+"x") {
		name = "v" + name
	}
	return name + suffix
}

// volumeNameChar reports whether CloudAPI takes c in a volume's name (\w,
// '.', '-').
func volumeNameChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-'
}

// volumeGone reports whether CloudAPI shows v deleted or being deleted:
// for the driver it no longer exists (and its name is free again).
func volumeGone(v *compute.Volume) bool { return v.State == volumeDeleting || v.State == "deleted" }

// toVolume is the framework's view of a Triton volume: its segment is its
// (first) network, its volume_context its NFS export once it has one.
func toVolume(v *compute.Volume) *csi.Volume {
	out := &csi.Volume{ID: v.ID, Name: v.Name, SizeBytes: v.Size * mib, MultiNode: true}
	if len(v.Networks) > 0 {
		out.Segment = v.Networks[0]
	}
	if v.FileSystemPath != "" {
		out.Context = map[string]string{ContextFilesystemPath: v.FileSystemPath}
	}
	return out
}

// volumeCall makes call, a triton-go volume request, under the operation
// name op; a panic in triton-go is an error.
func volumeCall[T any](ctx context.Context, op string, call func(context.Context) (T, error)) (T, error) {
	ctx = cloudapi.WithOperation(ctx, op)
	return cloud.Guarded(op, func() (T, error) { return call(ctx) })
}

// volumeNotFound reports whether err is CloudAPI's own answer that the
// volume a request named does not exist (any more): 404 VolumeNotFound.
// triton-go's Delete would take any 404 or 410 as success, but that
// branch is dead code (ExecuteRequestRaw errs on every status but 2xx),
// so the driver judges the error itself: a 404 ResourceNotFound is a
// CloudAPI without volumes (or not CloudAPI), a proxy's 404 page no API
// error at all; neither says the volume is gone.
func volumeNotFound(err error) bool {
	e := cloud.APIError(err)
	return e != nil && e.StatusCode == http.StatusNotFound && e.Code == codeVolumeNotFound
}

// readVolumeSizes reads the sizes the datacenter's volumes come in
// (ListVolumeSizes, GET /:login/volumesizes?type=tritonnfs, which triton-go
// v1.8.5 lacks), in MiB, ascending. A CloudAPI without volumes (RFD 26 is
// off by default) answers 404 ResourceNotFound.
func readVolumeSizes(ctx context.Context, a *cloud.Client) ([]int64, error) {
	where := cloudapi.RedactURL(a.URL())
	body, err := volumeCall(ctx, "volumesizes.list", func(ctx context.Context) ([]byte, error) {
		return readAll(a.Base().ExecuteRequest(ctx, client.RequestInput{Method: http.MethodGet,
			Path: path.Join("/", a.AccountName(), "volumesizes"), Query: &url.Values{"type": {volumeType}}}))
	})
	switch {
	case cloud.StatusOf(err) == http.StatusNotFound:
		return nil, fmt.Errorf("TRITON_URL: CloudAPI at %s serves no volumes: its operator has not enabled RFD 26 NFS volumes "+
			"(experimental_cloudapi_nfs_shared_volumes) in datacenter %s: %w", where, a.Datacenter, err)
	case err != nil:
		return nil, fmt.Errorf("TRITON_URL: listing the volume sizes at %s: %w", where, err)
	}
	var list []struct {
		Size int64  `json:"size"`
		Type string `json:"type"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		return nil, fmt.Errorf("listing the volume sizes at %s: malformed response: %w", where, err)
	}
	var sizes []int64
	for _, s := range list {
		if s.Type == volumeType && s.Size > 0 && !slices.Contains(sizes, s.Size) {
			sizes = append(sizes, s.Size)
		}
	}
	if len(sizes) == 0 {
		return nil, fmt.Errorf("TRITON_URL: CloudAPI at %s lists no %s volume size: the datacenter has no volume packages", where, volumeType)
	}
	slices.Sort(sizes)
	return sizes, nil
}

// readAll reads an ExecuteRequest answer's body, at most 1 MiB.
func readAll(body io.ReadCloser, err error) ([]byte, error) {
	if err != nil {
		return nil, err
	}
	defer body.Close()
	return io.ReadAll(io.LimitReader(body, 1<<20))
}

// sizeFor is the size, in MiB, of the volume to create for bytes (the
// framework's rounding into Limits): the smallest the datacenter has that
// holds them, within limit (0: none); OutOfRange when there is none.
func (p *Driver) sizeFor(bytes, limit int64) (int64, error) {
	want := (bytes + mib - 1) / mib
	i := slices.IndexFunc(p.sizes, func(s int64) bool { return s >= want })
	switch {
	case i < 0:
		return 0, status.Errorf(codes.OutOfRange, "capacity_range: %d MiB is more than the largest Triton volume, %d MiB", want, p.sizes[len(p.sizes)-1])
	case limit > 0 && p.sizes[i]*mib > limit:
		return 0, status.Errorf(codes.OutOfRange, "capacity_range: no Triton volume size from %d bytes to %d bytes: the datacenter's sizes are %s MiB",
			bytes, limit, joinSizes(p.sizes))
	}
	return p.sizes[i], nil
}

func joinSizes(sizes []int64) string {
	out := make([]string, len(sizes))
	for i, s := range sizes {
		out[i] = fmt.Sprint(s)
	}
	return strings.Join(out, ", ")
}

// Create creates a volume (the framework has looked it up by name): named
// as the CSI name, of the smallest size the datacenter has that holds the
// request, type tritonnfs, on the segment's fabric network (none: the
// account's default fabric network, as CloudAPI chooses). One POST. The
// volume is creating: Create answers csi.ErrPending, and the retry finds
// it by name (GetByName) until it is ready, as it may be at once; a
// volume that failed at once is deleted and reported.
func (p *Driver) Create(ctx context.Context, req csi.CreateRequest) (*csi.Volume, error) {
	a, err := p.controller()
	if err != nil {
		return nil, err
	}
	size, err := p.sizeFor(req.SizeBytes, req.LimitBytes)
	if err != nil {
		return nil, err
	}
	in := &compute.CreateVolumeInput{Name: volumeName(req.Name), Size: size, Type: volumeType}
	if req.Segment != "" {
		if !cloud.IsUUID(req.Segment) {
			return nil, status.Errorf(codes.InvalidArgument, "accessibility_requirements: %s %q is not a network UUID",
				TopologyKey, truncateText(req.Segment, 80))
		}
		in.Networks = []string{req.Segment}
	}
	v, err := volumeCall(ctx, "volumes.create", func(ctx context.Context) (*compute.Volume, error) {
		return a.Compute().Volumes().Create(ctx, in)
	})
	switch code := apiCode(err); {
	case code == codeVolumeExists:
		// Another create of this name was quicker: the retry finds it.
		return nil, csi.Pending("volume %s is being created elsewhere (%v)", in.Name, err)
	case code == codeVolumeSize:
		return nil, status.Errorf(codes.OutOfRange, "creating volume %s of %d MiB: the datacenter's volume sizes changed since the driver "+
			"read them at start-up (restart it to read them again): %v", in.Name, size, err)
	case code == codeNoDefaultFab:
		return nil, status.Errorf(codes.FailedPrecondition, "creating volume %s: the account has no default fabric network, "+
			"and the request no topology to choose one: %v", in.Name, err)
	case code == "InvalidArgument" || code == "ValidationError":
		return nil, status.Errorf(codes.InvalidArgument, "creating volume %s (%d MiB, networks %v): CloudAPI refused it: %v",
			in.Name, size, in.Networks, err)
	case err != nil:
		return nil, fmt.Errorf("creating volume %s: %w", in.Name, err)
	case v == nil || !isVolumeID(v.ID):
		return nil, fmt.Errorf("creating volume %s: malformed response: no volume ID", in.Name)
	}
	klog.FromContext(ctx).V(2).Info("Created volume", "volume", v.ID, "name", v.Name, "sizeMiB", v.Size, "networks", v.Networks, "state", v.State)
	return p.settled(ctx, a, v)
}

// settled is a volume the create made, or the one of its name: itself
// once ready, csi.ErrPending while it is being created; a failed one is
// deleted (the delete sent, not waited for) and reported, so that the
// retry creates another under the name, which a failed volume does not
// hold.
func (p *Driver) settled(ctx context.Context, a *cloud.Client, v *compute.Volume) (*csi.Volume, error) {
	switch v.State {
	case volumeReady:
		if v.FileSystemPath == "" {
			return nil, fmt.Errorf("volume %s (%s) is ready: malformed response: no filesystem_path", v.ID, v.Name)
		}
		return toVolume(v), nil
	case volumeFailed:
		derr := p.deleteVolume(ctx, a, v.ID)
		if derr != nil && !volumeNotFound(derr) {
			return nil, fmt.Errorf("volume %s (%s) failed to be created (CloudAPI state failed), and deleting it failed too: %w", v.ID, v.Name, derr)
		}
		return nil, fmt.Errorf("volume %s (%s) failed to be created (CloudAPI state failed): it is deleted, and the next CreateVolume makes another",
			v.ID, v.Name)
	case volumeCreating, "":
		return nil, csi.Pending("volume %s (%s) is being created", v.ID, v.Name)
	}
	return nil, fmt.Errorf("volume %s (%s) is %s, not ready", v.ID, v.Name, truncateText(v.State, 40))
}

// Get returns volume id: csi.ErrNotFound only when CloudAPI said so (its
// 404 VolumeNotFound, or the volume being deleted). A volume being created
// has no volume_context yet.
func (p *Driver) Get(ctx context.Context, id string) (*csi.Volume, error) {
	a, err := p.controller()
	if err != nil {
		return nil, err
	}
	if !isVolumeID(id) {
		return nil, noSuchVolume(id)
	}
	v, err := volumeCall(ctx, "volumes.get", func(ctx context.Context) (*compute.Volume, error) {
		return a.Compute().Volumes().Get(ctx, &compute.GetVolumeInput{ID: id})
	})
	switch {
	case volumeNotFound(err):
		return nil, fmt.Errorf("volume %s: %w (%w)", id, csi.ErrNotFound, err)
	case err != nil:
		return nil, fmt.Errorf("getting volume %s: %w", id, err)
	case v == nil || v.ID != id:
		return nil, fmt.Errorf("getting volume %s: malformed response: not that volume", id)
	case volumeGone(v):
		return nil, fmt.Errorf("volume %s is %s: %w", id, v.State, csi.ErrNotFound)
	}
	return toVolume(v), nil
}

// GetByName returns the volume a CreateVolume named name made, nil when
// there is none: one list of the account's volumes of that name (CloudAPI
// filters by name, and leaves failed volumes out). Ready, it is the
// volume; being created, csi.ErrPending (the caller retries). When there
// is none, a second list, of failed volumes of the name: one is deleted
// and reported (see settled). Two live volumes of the name are an error,
// not a guess.
func (p *Driver) GetByName(ctx context.Context, name, _ string) (*csi.Volume, error) {
	a, err := p.controller()
	if err != nil {
		return nil, err
	}
	want := volumeName(name)
	found, err := p.listVolumes(ctx, a, &compute.ListVolumesInput{Name: want, Type: volumeType})
	if err != nil {
		return nil, err
	}
	found = slices.DeleteFunc(found, func(v *compute.Volume) bool { return v.Name != want || volumeGone(v) })
	if len(found) == 0 {
		failed, err := p.listVolumes(ctx, a, &compute.ListVolumesInput{Name: want, Type: volumeType, State: volumeFailed})
		if err != nil {
			return nil, err
		}
		found = slices.DeleteFunc(failed, func(v *compute.Volume) bool { return v.Name != want || v.State != volumeFailed })
	}
	switch {
	case len(found) == 0:
		return nil, nil //nolint:nilnil // the framework's "none"
	case len(found) > 1:
		ids := make([]string, 0, len(found))
		for _, v := range found {
			ids = append(ids, v.ID+" ("+v.State+")")
		}
		return nil, fmt.Errorf("several volumes are named %q (%s): delete all but one", want, strings.Join(ids, ", "))
	}
	return p.settled(ctx, a, found[0])
}

// listVolumes lists the account's volumes that match in (one GET),
// checking each has a volume's ID.
func (p *Driver) listVolumes(ctx context.Context, a *cloud.Client, in *compute.ListVolumesInput) ([]*compute.Volume, error) {
	list, err := volumeCall(ctx, "volumes.list", func(ctx context.Context) ([]*compute.Volume, error) {
		return a.Compute().Volumes().List(ctx, in)
	})
	if err != nil {
		return nil, fmt.Errorf("listing volumes: %w", err)
	}
	for _, v := range list {
		if v == nil || !isVolumeID(v.ID) {
			id := ""
			if v != nil {
				id = v.ID
			}
			return nil, fmt.Errorf("listing volumes: malformed response: volume ID %q", truncateText(id, 40))
		}
	}
	return list, nil
}

// Delete deletes volume id, sending the delete and never waiting for it
// to be done: csi.ErrNotFound when CloudAPI says it is gone (404
// VolumeNotFound), csi.ErrInUse while a machine uses it (409
// VolumeInUse: CloudAPI refuses until no active machine refers to it).
// One DELETE. CloudAPI knows nothing of the nodes' NFS mounts (a machine
// is a ref only when it was created with the volume): Kubernetes deletes
// a volume only once no Pod uses it, so every node has unmounted it.
func (p *Driver) Delete(ctx context.Context, id string) error {
	a, err := p.controller()
	if err != nil {
		return err
	}
	if !isVolumeID(id) {
		return noSuchVolume(id)
	}
	err = p.deleteVolume(ctx, a, id)
	switch {
	case err == nil:
		return nil
	case volumeNotFound(err):
		return fmt.Errorf("volume %s: %w (%w)", id, csi.ErrNotFound, err)
	case apiCode(err) == codeVolumeInUse:
		return fmt.Errorf("volume %s: %w: %s", id, csi.ErrInUse, cmp.Or(cloud.APIError(err).Message, "a machine uses it"))
	}
	return fmt.Errorf("deleting volume %s: %w", id, err)
}

// deleteVolume sends DeleteVolume for id.
func (p *Driver) deleteVolume(ctx context.Context, a *cloud.Client, id string) error {
	_, err := volumeCall(ctx, "volumes.delete", func(ctx context.Context) (struct{}, error) {
		return struct{}{}, a.Compute().Volumes().Delete(ctx, &compute.DeleteVolumeInput{ID: id})
	})
	return err
}

// ListVolumes lists the account's tritonnfs volumes, but for those being
// deleted (and the failed ones, which CloudAPI leaves out). One GET.
func (p *Driver) ListVolumes(ctx context.Context) ([]*csi.Volume, error) {
	a, err := p.controller()
	if err != nil {
		return nil, err
	}
	all, err := p.listVolumes(ctx, a, &compute.ListVolumesInput{Type: volumeType})
	if err != nil {
		return nil, err
	}
	out := make([]*csi.Volume, 0, len(all))
	for _, v := range all {
		if !volumeGone(v) && v.State != volumeFailed {
			out = append(out, toVolume(v))
		}
	}
	return out, nil
}

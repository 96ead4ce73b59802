package csidriver

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"

	rancher "github.com/rancher/go-rancher/v2"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"k8s.io/klog/v2"

	"github.com/ccmkit/ccmkit/framework/csi"
	"github.com/ccmkit/ccmkit/providers/rancher/internal/cloud"
)

// Volume states the driver acts on besides cloud.StateRemoving (and
// cloud.Removed's): a volume containers use, or are starting with.
const (
	stateActive     = "active"
	stateActivating = "activating"
)

// Storage drivers' volume access modes and scopes (the storageDriver
// schema's options).
const (
	accessMultiHostRW = "multiHostRW"
	scopeLocal        = "local"
)

// driverLocal is Docker's own volume driver: a container's volume on its
// host's disk, with no plugin socket; not a volume of this driver.
const driverLocal = "local"

// Volume context keys: what the node needs to have the host's plugin
// mount the volume (NodeMount), never a credential.
const (
	contextDriver        = "driver"
	contextName          = "name"
	contextDriverOptPref = paramDriverOptPrefix
)

// csiDescription starts the description of the volumes the driver
// creates, which also records the capacity asked for (see describe).
const csiDescription = "Created by the Rancher CSI driver (" + DriverName + ")"

// describedCapacity is the capacity a volume's description records.
var describedCapacity = regexp.MustCompile(`; capacity ([0-9]{1,15}) MiB`)

// describe is the description of a volume the driver creates: whose it
// is, the capacity asked for, and the claim when external-provisioner
// said (--extra-create-metadata). The capacity is recorded there because
// Cattle keeps a volume's sizeMb only for a storage driver that
// schedules by size (a local-scope one; others refuse a size, 422
// InvalidOption), and the framework's idempotency compares a volume's
// capacity with the request's: a volume on an NFS share has no size of
// its own, so what it was asked for is its capacity, as NFS drivers
// report it.
func describe(params map[string]string, sizeMb int64) string {
	d := fmt.Sprintf("%s; capacity %d MiB", csiDescription, sizeMb)
	if ns, name := params["csi.storage.k8s.io/pvc/namespace"], params["csi.storage.k8s.io/pvc/name"]; name != "" {
		d += "; PersistentVolumeClaim " + ns + "/" + name
	}
	return truncateText(d, 1000)
}

// volumeGone reports whether Cattle shows v removed or being removed:
// for the driver it no longer exists.
func volumeGone(v *rancher.Volume) (bool, error) {
	if v.State == cloud.StateRemoving {
		return true, nil
	}
	return cloud.Removed("volume", v.Id, v.State, v.Removed)
}

// sizeBytes is a volume's capacity: its sizeMb, else the capacity its
// description records (the driver's volumes), else 0: unknown, as the
// CSI spec has it for a share.
func sizeBytes(v *rancher.Volume) int64 {
	if v.SizeMb > 0 {
		return v.SizeMb * mib
	}
	if m := describedCapacity.FindStringSubmatch(v.Description); m != nil && strings.HasPrefix(v.Description, csiDescription) {
		if n, err := strconv.ParseInt(m[1], 10, 64); err == nil {
			return n * mib
		}
	}
	return 0
}

// optString is a driverOpts value as the Docker plugin gets it: a string
// as it is, any other value as JSON (Rancher's agent makes every value a
// string before it creates the volume).
func optString(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// toVolume is the framework's view of a Cattle volume, whose driver's
// volumes are multi-host when multi; an error when it cannot be named
// (a malformed answer, or a volume whose name or driver no ID can hold).
func toVolume(v *rancher.Volume, multi bool) (*csi.Volume, error) {
	ref := volumeRef{cattleID: v.Id, driver: v.Driver, name: v.Name}
	if _, ok := parseVolumeID(ref.String()); !ok {
		return nil, fmt.Errorf("volume %q (%q of driver %q) has no volume ID of %s: a name or driver the driver cannot name",
			truncateText(v.Id, 40), truncateText(v.Name, 80), truncateText(v.Driver, 80), DriverName)
	}
	ctx := map[string]string{contextDriver: v.Driver, contextName: v.Name}
	for k, o := range v.DriverOpts {
		if o != nil && k != "" { // Cattle drops nulls
			ctx[contextDriverOptPref+k] = optString(o)
		}
	}
	return &csi.Volume{ID: ref.String(), Name: v.Name, SizeBytes: sizeBytes(v), MultiNode: multi, Context: ctx}, nil
}

// multiHost reports whether a storage driver's volumes are multi-host:
// its volumeAccessMode is multiHostRW, or unset (Cattle's default, which
// it writes when the driver activates).
func multiHost(d *rancher.StorageDriver) bool {
	return d.VolumeAccessMode == accessMultiHostRW || d.VolumeAccessMode == ""
}

// storageDrivers lists the environment's storage drivers that are not
// removed (one GET).
func (p *Driver) storageDrivers(ctx context.Context, a *cloud.API) ([]rancher.StorageDriver, error) {
	all, err := cloud.ListAll[rancher.StorageDriver](ctx, a, "storagedrivers.list", rancher.STORAGE_DRIVER_TYPE, map[string]any{"removed_null": "1"}, 0)
	if err != nil {
		return nil, err
	}
	out := all[:0]
	for _, d := range all {
		if d.Id == "" {
			return nil, errors.New("listing storage drivers: malformed response: a storage driver without an id")
		}
		if gone, err := cloud.Removed("storage driver", d.Id, d.State, d.Removed); err != nil {
			return nil, err
		} else if !gone {
			out = append(out, d)
		}
	}
	return out, nil
}

// driverNamed is the driver of drivers called name, nil when none.
func driverNamed(drivers []rancher.StorageDriver, name string) *rancher.StorageDriver {
	for i := range drivers {
		if drivers[i].Name == name {
			return &drivers[i]
		}
	}
	return nil
}

// volumeMultiHost reports whether volume v is multi-host: its own
// accessMode, which Cattle sets when a container first mounts it, else
// its storage driver's (drivers, when not nil, are the environment's;
// else one read). A driver no longer there serves no host.
func (p *Driver) volumeMultiHost(ctx context.Context, a *cloud.API, v *rancher.Volume, drivers []rancher.StorageDriver) (bool, error) {
	if v.AccessMode != "" {
		return v.AccessMode == accessMultiHostRW, nil
	}
	if drivers == nil {
		var err error
		if drivers, err = p.storageDrivers(ctx, a); err != nil {
			return false, err
		}
	}
	for i := range drivers {
		if d := &drivers[i]; (v.StorageDriverId != "" && d.Id == v.StorageDriverId) || (v.StorageDriverId == "" && d.Name == v.Driver) {
			return multiHost(d), nil
		}
	}
	return false, nil
}

// getVolume reads the volume ref names (one GET): csi.ErrNotFound only
// when Cattle answered its own 404, or has that ID for another volume (a
// name or driver of another: the ID's volume is not there); an answer
// that is not that volume is an error.
func (p *Driver) getVolume(ctx context.Context, a *cloud.API, ref volumeRef) (*rancher.Volume, error) {
	v, err := cloud.ByID[rancher.Volume](ctx, a, "volumes.get", rancher.VOLUME_TYPE, ref.cattleID)
	switch {
	case a.NotFound(err):
		return nil, fmt.Errorf("volume %s: %w (%w)", ref, csi.ErrNotFound, err)
	case err != nil:
		return nil, err
	case v.Name != ref.name || v.Driver != ref.driver:
		return nil, fmt.Errorf("volume %s: Cattle's %s is %q of driver %q, another volume: %w", ref, ref.cattleID,
			truncateText(v.Name, 80), truncateText(v.Driver, 80), csi.ErrNotFound)
	}
	return v, nil
}

// Create creates a Cattle volume (the framework has looked it up by
// name) in the storage driver the StorageClass names: one list of the
// environment's storage drivers (the driver must be there, and
// multi-host when a multi-node access mode is asked for: else an error
// before any write), one POST of {name, driver, storageDriverId,
// driverOpts, description} (and sizeMb, for a driver that schedules by
// size). The volume is registering; nothing waits for it: the node's
// plugin creates the volume on its host when it first mounts it, as
// Rancher's agent has it do for a container.
func (p *Driver) Create(ctx context.Context, req csi.CreateRequest) (*csi.Volume, error) {
	a, err := p.client()
	if err != nil {
		return nil, err
	}
	driverName := driverParameter(req.Parameters)
	drivers, err := p.storageDrivers(ctx, a)
	if err != nil {
		return nil, err
	}
	d := driverNamed(drivers, driverName)
	if d == nil {
		names := make([]string, 0, len(drivers))
		for _, d := range drivers {
			names = append(names, d.Name)
		}
		return nil, status.Errorf(codes.InvalidArgument, "parameter %s: the environment has no storage driver %q (it has %s): "+
			"start its storage stack from Rancher's catalog, or name another", paramDriver, driverName, listOrNone(names))
	}
	multi := multiHost(d)
	if req.MultiNode && !multi {
		return nil, fmt.Errorf("%w: a multi-node access mode (ReadWriteMany, ReadOnlyMany) of storage driver %s, whose volumes are %s: "+
			"one host at a time (ReadWriteOnce only)", csi.ErrUnsupported, d.Name, d.VolumeAccessMode)
	}
	name, sizeMb := volumeName(req.Name), req.SizeBytes/mib
	body := &rancher.Volume{Name: name, Driver: d.Name, StorageDriverId: d.Id, Description: describe(req.Parameters, sizeMb)}
	if opts := driverOptsParameters(req.Parameters); len(opts) > 0 {
		body.DriverOpts = make(map[string]any, len(opts))
		for k, v := range opts {
			body.DriverOpts[k] = v
		}
	}
	if d.Scope == scopeLocal {
		body.SizeMb = sizeMb
	}
	v, err := cloud.CreateResource[rancher.Volume](ctx, a, "volumes.create", rancher.VOLUME_TYPE, body)
	switch {
	case isValidation(err, "NotUnique"):
		return nil, csi.Pending("a volume %s of storage driver %s exists already: created meanwhile, it is looked up again", name, d.Name)
	case apiStatus(err) == http.StatusUnprocessableEntity:
		return nil, status.Errorf(codes.InvalidArgument, "creating volume %s in storage driver %s: Cattle refused it (%s)", name, d.Name, cattleMessage(err))
	case err != nil:
		return nil, fmt.Errorf("creating volume %s: %w", name, err)
	case !validCattleVolumeID.MatchString(v.Id) || v.Name != name:
		return nil, fmt.Errorf("creating volume %s: malformed response: volume %q named %q", name, truncateText(v.Id, 40), truncateText(v.Name, 80))
	}
	if v.Driver == "" {
		v.Driver = d.Name // Cattle's answer to the POST, before the create process resolved it
	}
	return toVolume(v, multi)
}

// listOrNone is names joined, or "none".
func listOrNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// apiStatus is the HTTP status of a Cattle error answer, 0 for other
// errors.
func apiStatus(err error) int {
	var e *rancher.ApiError
	if errors.As(err, &e) {
		return e.StatusCode
	}
	return 0
}

// isValidation reports whether err is Cattle's 422 with code (as
// go-rancher keeps its body: "code=NotUnique, ...").
func isValidation(err error, code string) bool {
	if apiStatus(err) != http.StatusUnprocessableEntity {
		return false
	}
	return slices.Contains(strings.Split(cattleMessage(err), ", "), "code="+code)
}

// Get returns the volume with the ID: csi.ErrNotFound only when Cattle
// said so (its 404, the ID's Cattle volume another one, or the volume
// removed or being removed). One GET, and one list of the storage
// drivers for a volume no container has mounted yet (its access mode is
// its driver's).
func (p *Driver) Get(ctx context.Context, id string) (*csi.Volume, error) {
	a, err := p.client()
	if err != nil {
		return nil, err
	}
	ref, ok := parseVolumeID(id)
	if !ok {
		return nil, noSuchVolume(id)
	}
	v, err := p.getVolume(ctx, a, ref)
	if err != nil {
		return nil, err
	}
	if gone, err := volumeGone(v); err != nil {
		return nil, err
	} else if gone {
		return nil, fmt.Errorf("volume %s is %s: %w", ref, v.State, csi.ErrNotFound)
	}
	multi, err := p.volumeMultiHost(ctx, a, v, nil)
	if err != nil {
		return nil, err
	}
	return toVolume(v, multi)
}

// GetByName returns the volume a CreateVolume named name made, nil when
// there is none: one list of the live volumes of that name (Cattle's
// name filter), whatever their driver (the framework's lookup has no
// StorageClass: the CSI name, external-provisioner's pvc-<UID>, is the
// volume's identity). Two of the name are an error, not a guess.
func (p *Driver) GetByName(ctx context.Context, name, _ string) (*csi.Volume, error) {
	a, err := p.client()
	if err != nil {
		return nil, err
	}
	want := volumeName(name)
	all, err := cloud.ListAll[rancher.Volume](ctx, a, "volumes.list", rancher.VOLUME_TYPE, map[string]any{"name": want, "removed_null": "1"}, 0)
	if err != nil {
		return nil, err
	}
	var found []*rancher.Volume
	for i := range all {
		v := &all[i]
		if v.Name != want {
			continue
		}
		if gone, err := volumeGone(v); err != nil {
			return nil, err
		} else if !gone {
			found = append(found, v)
		}
	}
	switch {
	case len(found) == 0:
		return nil, nil //nolint:nilnil // the framework's "none"
	case len(found) > 1:
		ids := make([]string, 0, len(found))
		for _, v := range found {
			ids = append(ids, v.Id+" ("+v.Driver+")")
		}
		return nil, fmt.Errorf("several volumes are named %q (%s): remove all but one", want, strings.Join(ids, ", "))
	}
	multi, err := p.volumeMultiHost(ctx, a, found[0], nil)
	if err != nil {
		return nil, err
	}
	return toVolume(found[0], multi)
}

// Delete removes the volume with the ID, as the Rancher UI deletes one:
// the remove action, which has the storage driver delete its data
// (rancher-nfs unless the volume's onRemove says retain), then, once
// Cattle has it removed, the purge action, which Cattle's purge monitor
// would run later. Never waiting: csi.ErrPending while Cattle is removing
// it (or creating it: a volume offers remove once registered),
// csi.ErrInUse while containers use it (active: Cattle offers no remove),
// csi.ErrNotFound when Cattle says it is gone. One GET, and a POST of
// the action the volume's state calls for.
func (p *Driver) Delete(ctx context.Context, id string) error {
	a, err := p.client()
	if err != nil {
		return err
	}
	ref, ok := parseVolumeID(id)
	if !ok {
		return noSuchVolume(id)
	}
	v, err := p.getVolume(ctx, a, ref)
	if err != nil {
		return err
	}
	gone, err := cloud.Removed("volume", v.Id, v.State, v.Removed)
	switch {
	case err != nil:
		return err
	case gone:
		p.purge(ctx, a, ref, v)
		return nil
	case v.State == cloud.StateRemoving:
		return csi.Pending("Cattle is removing volume %s", ref)
	case v.Actions["remove"] != "":
		out := &rancher.Volume{}
		err := a.Do(ctx, "volumes.remove", func(c *cloud.Call) error {
			return c.Action(rancher.VOLUME_TYPE, "remove", &v.Resource, nil, out)
		})
		switch {
		case a.NotFound(err):
			return fmt.Errorf("volume %s: %w (%w)", ref, csi.ErrNotFound, err)
		case isValidation(err, "ActionNotAvailable"):
			return csi.Pending("volume %s changed meanwhile: Cattle no longer offers its remove", ref)
		case err != nil:
			return fmt.Errorf("removing volume %s: %w", ref, err)
		case out.Id != v.Id:
			return fmt.Errorf("removing volume %s: malformed response: volume %q", ref, truncateText(out.Id, 40))
		}
		if gone, err := cloud.Removed("volume", out.Id, out.State, out.Removed); err == nil && gone {
			p.purge(ctx, a, ref, out)
			return nil
		}
		return csi.Pending("Cattle is removing volume %s (%s)", ref, out.State)
	case v.State == stateActive || v.State == stateActivating || len(v.Mounts) > 0:
		return fmt.Errorf("volume %s is %s, mounted by %s: %w", ref, v.State, mountedBy(v), csi.ErrInUse)
	}
	return csi.Pending("volume %s is %s: Cattle offers no remove until it settles", ref, v.State)
}

// purge runs the purge action of a removed volume when Cattle offers it,
// so that its record goes now rather than when Cattle's purge monitor
// gets to it. The volume is deleted either way: a failure is logged.
func (p *Driver) purge(ctx context.Context, a *cloud.API, ref volumeRef, v *rancher.Volume) {
	if v.Actions["purge"] == "" {
		return
	}
	err := a.Do(ctx, "volumes.purge", func(c *cloud.Call) error {
		return c.Action(rancher.VOLUME_TYPE, "purge", &v.Resource, nil, &rancher.Volume{})
	})
	if err != nil && !a.NotFound(err) {
		klog.FromContext(ctx).V(2).Info("Purging a removed volume failed; Cattle purges it later", "volume", ref.String(), "err", err)
	}
}

// mountedBy names the containers that mount v, as Cattle lists them.
func mountedBy(v *rancher.Volume) string {
	var names []string
	for _, m := range v.Mounts {
		names = append(names, cmp.Or(m.InstanceName, m.InstanceId)+":"+m.Path)
	}
	if len(names) == 0 {
		return "containers"
	}
	return "containers " + strings.Join(names, ", ")
}

// ListVolumes lists the environment's volumes the driver can serve: those
// of a storage driver (Docker's local volumes, and host paths, have no
// plugin to mount them through), not removed, whose name and driver an ID
// can hold. One list of the volumes, one of the storage drivers.
func (p *Driver) ListVolumes(ctx context.Context) ([]*csi.Volume, error) {
	a, err := p.client()
	if err != nil {
		return nil, err
	}
	all, err := cloud.ListAll[rancher.Volume](ctx, a, "volumes.list", rancher.VOLUME_TYPE, map[string]any{"removed_null": "1"}, 0)
	if err != nil {
		return nil, err
	}
	drivers, err := p.storageDrivers(ctx, a)
	if err != nil {
		return nil, err
	}
	out := make([]*csi.Volume, 0, len(all))
	for i := range all {
		v := &all[i]
		if v.Id == "" {
			return nil, errors.New("listing volumes: malformed response: a volume without an id")
		}
		gone, err := volumeGone(v)
		if err != nil {
			return nil, err
		}
		if gone || v.Driver == "" || v.Driver == driverLocal || v.IsHostPath {
			continue
		}
		multi, err := p.volumeMultiHost(ctx, a, v, drivers)
		if err != nil {
			return nil, err
		}
		vol, err := toVolume(v, multi)
		if err != nil {
			klog.FromContext(ctx).V(4).Info("Not listing a volume the driver cannot name", "volume", v.Id, "reason", err)
			continue
		}
		out = append(out, vol)
	}
	slices.SortFunc(out, func(x, y *csi.Volume) int { return strings.Compare(x.ID, y.ID) })
	return out, nil
}

// driverOptsOf is a volume context's driver options.
func driverOptsOf(volumeContext map[string]string) map[string]string {
	out := map[string]string{}
	for _, k := range slices.Sorted(maps.Keys(volumeContext)) {
		if opt, ok := strings.CutPrefix(k, contextDriverOptPref); ok && opt != "" {
			out[opt] = volumeContext[k]
		}
	}
	return out
}

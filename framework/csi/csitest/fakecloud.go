package csitest

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/ccmkit/ccmkit/framework/csi"
	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// Defaults of FakeCloud.
const (
	FakeDriverName  = "fake.csi.ccmkit.io"
	FakeTopologyKey = "topology.fake.csi.ccmkit.io/zone"
	FakeZone        = "zone-1"
	FakeNode        = "node-1"
	// FakeSerialKey is the publish context key Attach returns: the
	// serial the device is linked by, as a cloud names its disks.
	FakeSerialKey  = "fake.csi.ccmkit.io/serial"
	fakeByIDPrefix = "virtio-fake-"
)

// FakeLimits are FakeCloud's sizes: 16 MiB steps from 16 MiB to 4 GiB,
// 64 MiB by default, 4 volumes a node.
var FakeLimits = csi.Limits{MinBytes: 16 << 20, StepBytes: 16 << 20, MaxBytes: 4 << 30, DefaultBytes: 64 << 20, MaxPerNode: 4}

// FakeCloud is an in-memory block-storage cloud and its csi.Provider
// (with every optional capability): volumes, attachments and snapshots
// in maps, calling its Hypervisor (when not nil) as a simulator does, so
// that with a LoopHypervisor the node side works on real devices. It is
// what the kit's own tests run csi-sanity on, and a provider for testing
// code built on framework/csi.
type FakeCloud struct {
	// Hypervisor backs the volumes; nil keeps records only.
	Hypervisor simkit.Hypervisor
	// Zones are the topology segments volumes may go to; the first is
	// the default and the node's. Nil is FakeZone.
	Zones []string
	// Nodes are the nodes volumes may attach to; the first is this
	// node. Nil is FakeNode.
	Nodes []string
	// Limit is what Limits answers; FakeLimits when zero.
	Limit csi.Limits
	// PendingActions, when positive, makes every attach, detach and
	// expand answer ErrPending that many times before it is done, as a
	// cloud's asynchronous actions.
	PendingActions int

	mu        sync.Mutex
	next      int
	volumes   map[string]*csi.Volume
	snapshots map[string]*csi.Snapshot
	pending   map[string]int
	calls     map[string]int
	writes    int
	faults    map[string]error
}

var (
	_ csi.Provider           = (*FakeCloud)(nil)
	_ csi.Attacher           = (*FakeCloud)(nil)
	_ csi.Expander           = (*FakeCloud)(nil)
	_ csi.Snapshotter        = (*FakeCloud)(nil)
	_ csi.Lister             = (*FakeCloud)(nil)
	_ csi.ParameterValidator = (*FakeCloud)(nil)
)

// NewFakeCloud returns an empty FakeCloud whose volumes hv backs (nil:
// records only).
func NewFakeCloud(hv simkit.Hypervisor) *FakeCloud {
	return &FakeCloud{Hypervisor: hv}
}

func (c *FakeCloud) init() {
	if c.volumes == nil {
		c.volumes, c.snapshots, c.pending, c.calls, c.faults =
			map[string]*csi.Volume{}, map[string]*csi.Snapshot{}, map[string]int{}, map[string]int{}, map[string]error{}
	}
}

// call counts op and returns the fault set for it, if any.
func (c *FakeCloud) call(op string) error {
	c.init()
	c.calls[op]++
	if err := c.faults[op]; err != nil {
		delete(c.faults, op)
		return err
	}
	return nil
}

// Fail makes the next call of op ("Create", "Attach", ...) fail with err.
func (c *FakeCloud) Fail(op string, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.init()
	c.faults[op] = err
}

// Calls is how many times op was called.
func (c *FakeCloud) Calls(op string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls[op]
}

// Writes is the number of calls that changed the cloud.
func (c *FakeCloud) Writes() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.writes
}

// Volumes returns copies of the volumes, by ID.
func (c *FakeCloud) Volumes() []csi.Volume {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := []csi.Volume{}
	for _, id := range slices.Sorted(maps.Keys(c.volumes)) {
		v := *c.volumes[id]
		v.Nodes = slices.Clone(v.Nodes)
		out = append(out, v)
	}
	return out
}

// Snapshots returns copies of the snapshots, by ID.
func (c *FakeCloud) Snapshots() []csi.Snapshot {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := []csi.Snapshot{}
	for _, id := range slices.Sorted(maps.Keys(c.snapshots)) {
		out = append(out, *c.snapshots[id])
	}
	return out
}

func (c *FakeCloud) Name() string        { return FakeDriverName }
func (c *FakeCloud) TopologyKey() string { return FakeTopologyKey }

func (c *FakeCloud) Limits() csi.Limits {
	if c.Limit == (csi.Limits{}) {
		return FakeLimits
	}
	return c.Limit
}

func (c *FakeCloud) zones() []string {
	if len(c.Zones) == 0 {
		return []string{FakeZone}
	}
	return c.Zones
}

func (c *FakeCloud) nodes() []string {
	if len(c.Nodes) == 0 {
		return []string{FakeNode}
	}
	return c.Nodes
}

// ValidateParameters accepts one StorageClass parameter, type: standard
// or fast.
func (c *FakeCloud) ValidateParameters(params map[string]string) error {
	for _, k := range slices.Sorted(maps.Keys(params)) {
		switch v := params[k]; k {
		case "type":
			if v != "standard" && v != "fast" {
				return fmt.Errorf("type: %q is not standard or fast", v)
			}
		default:
			return fmt.Errorf("%s: unknown parameter", k)
		}
	}
	return nil
}

func (c *FakeCloud) disk(v *csi.Volume) simkit.Disk {
	d := simkit.Disk{ID: v.ID, ByIDName: fakeByIDPrefix + v.ID, SizeBytes: v.SizeBytes}
	if len(v.Nodes) > 0 {
		d.Server = v.Nodes[0]
	}
	return d
}

func (c *FakeCloud) Create(_ context.Context, req csi.CreateRequest) (*csi.Volume, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.call("Create"); err != nil {
		return nil, err
	}
	segment := req.Segment
	if segment == "" {
		segment = c.zones()[0]
	} else if !slices.Contains(c.zones(), segment) {
		return nil, fmt.Errorf("zone %q: no such zone", segment)
	}
	if req.Snapshot != "" {
		if _, ok := c.snapshots[req.Snapshot]; !ok {
			return nil, fmt.Errorf("snapshot %s: %w", req.Snapshot, csi.ErrNotFound)
		}
	}
	c.next++
	v := &csi.Volume{ID: fmt.Sprintf("vol-%04d", c.next), Name: req.Name, SizeBytes: req.SizeBytes, Segment: segment, Snapshot: req.Snapshot}
	if c.Hypervisor != nil {
		if err := c.Hypervisor.Create(c.disk(v), req.Snapshot); err != nil {
			return nil, err
		}
	}
	c.volumes[v.ID] = v
	c.writes++
	return copyVolume(v), nil
}

func copyVolume(v *csi.Volume) *csi.Volume {
	out := *v
	out.Nodes = slices.Clone(v.Nodes)
	return &out
}

func (c *FakeCloud) Get(_ context.Context, id string) (*csi.Volume, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.call("Get"); err != nil {
		return nil, err
	}
	v, ok := c.volumes[id]
	if !ok {
		return nil, fmt.Errorf("volume %s: %w", id, csi.ErrNotFound)
	}
	return copyVolume(v), nil
}

func (c *FakeCloud) GetByName(_ context.Context, name, segment string) (*csi.Volume, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.call("GetByName"); err != nil {
		return nil, err
	}
	for _, v := range c.volumes {
		if v.Name == name && (segment == "" || v.Segment == segment) {
			return copyVolume(v), nil
		}
	}
	return nil, nil
}

func (c *FakeCloud) Delete(_ context.Context, id string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.call("Delete"); err != nil {
		return err
	}
	v, ok := c.volumes[id]
	switch {
	case !ok:
		return fmt.Errorf("volume %s: %w", id, csi.ErrNotFound)
	case len(v.Nodes) > 0:
		return fmt.Errorf("volume %s is attached to %v: %w", id, v.Nodes, csi.ErrInUse)
	}
	if c.Hypervisor != nil {
		if err := c.Hypervisor.Delete(c.disk(v)); err != nil {
			return err
		}
	}
	delete(c.volumes, id)
	c.writes++
	return nil
}

// stillPending counts an action down: ErrPending until PendingActions
// calls were made for it.
func (c *FakeCloud) stillPending(action string) error {
	if c.PendingActions <= 0 {
		return nil
	}
	if c.pending[action]++; c.pending[action] <= c.PendingActions {
		return csi.Pending("%s in progress", action)
	}
	delete(c.pending, action)
	return nil
}

func (c *FakeCloud) Attach(_ context.Context, id, node string) (map[string]string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.call("Attach"); err != nil {
		return nil, err
	}
	v, ok := c.volumes[id]
	switch {
	case !ok:
		return nil, fmt.Errorf("volume %s: %w", id, csi.ErrNotFound)
	case !slices.Contains(c.nodes(), node):
		return nil, fmt.Errorf("node %s: %w", node, csi.ErrNodeNotFound)
	case slices.Contains(v.Nodes, node):
		return c.publishContext(v), nil
	case len(v.Nodes) > 0:
		return nil, fmt.Errorf("volume %s is attached to %s: %w", id, v.Nodes[0], csi.ErrAttachedElsewhere)
	}
	if n := c.attachedTo(node); c.Limits().MaxPerNode > 0 && n >= int(c.Limits().MaxPerNode) {
		return nil, fmt.Errorf("node %s has %d volumes: %w", node, n, csi.ErrLimit)
	}
	if err := c.stillPending("attach " + id); err != nil {
		return nil, err
	}
	v.Nodes = []string{node}
	if c.Hypervisor != nil {
		if err := c.Hypervisor.Attach(c.disk(v)); err != nil {
			v.Nodes = nil
			return nil, err
		}
	}
	c.writes++
	return c.publishContext(v), nil
}

func (c *FakeCloud) attachedTo(node string) int {
	n := 0
	for _, v := range c.volumes {
		if slices.Contains(v.Nodes, node) {
			n++
		}
	}
	return n
}

func (c *FakeCloud) publishContext(v *csi.Volume) map[string]string {
	return map[string]string{FakeSerialKey: fakeByIDPrefix + v.ID}
}

func (c *FakeCloud) Detach(_ context.Context, id, node string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.call("Detach"); err != nil {
		return err
	}
	v, ok := c.volumes[id]
	if !ok {
		return fmt.Errorf("volume %s: %w", id, csi.ErrNotFound)
	}
	if !slices.Contains(v.Nodes, node) {
		return nil
	}
	if err := c.stillPending("detach " + id); err != nil {
		return err
	}
	if c.Hypervisor != nil {
		if err := c.Hypervisor.Detach(c.disk(v)); err != nil {
			return err
		}
	}
	v.Nodes = slices.DeleteFunc(v.Nodes, func(n string) bool { return n == node })
	c.writes++
	return nil
}

func (c *FakeCloud) Node(context.Context) (csi.NodeInfo, error) {
	return csi.NodeInfo{ID: c.nodes()[0], Segment: c.zones()[0]}, nil
}

// DevicePath is byID/<serial>, the serial from the publish context.
func (c *FakeCloud) DevicePath(byID, id string, publishContext map[string]string) (string, error) {
	serial := publishContext[FakeSerialKey]
	if serial == "" {
		return "", fmt.Errorf("publish context has no %s", FakeSerialKey)
	}
	return filepath.Join(byID, serial), nil
}

func (c *FakeCloud) Expand(_ context.Context, id string, size int64) (int64, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.call("Expand"); err != nil {
		return 0, err
	}
	v, ok := c.volumes[id]
	if !ok {
		return 0, fmt.Errorf("volume %s: %w", id, csi.ErrNotFound)
	}
	if size <= v.SizeBytes {
		return v.SizeBytes, nil
	}
	if err := c.stillPending("expand " + id); err != nil {
		return 0, err
	}
	grown := *v
	grown.SizeBytes = size
	if c.Hypervisor != nil {
		if err := c.Hypervisor.Resize(c.disk(&grown)); err != nil {
			return 0, err
		}
	}
	v.SizeBytes = size
	c.writes++
	return size, nil
}

func (c *FakeCloud) ListVolumes(context.Context) ([]*csi.Volume, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.call("ListVolumes"); err != nil {
		return nil, err
	}
	out := []*csi.Volume{}
	for _, v := range c.volumes {
		out = append(out, copyVolume(v))
	}
	return out, nil
}

func (c *FakeCloud) CreateSnapshot(_ context.Context, source, name string) (*csi.Snapshot, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.call("CreateSnapshot"); err != nil {
		return nil, err
	}
	v, ok := c.volumes[source]
	if !ok {
		return nil, fmt.Errorf("volume %s: %w", source, csi.ErrNotFound)
	}
	c.next++
	s := &csi.Snapshot{ID: fmt.Sprintf("snap-%04d", c.next), Name: name, Source: source, SizeBytes: v.SizeBytes,
		CreatedUnix: time.Now().Unix(), Ready: true}
	if c.Hypervisor != nil {
		if err := c.Hypervisor.Snapshot(c.disk(v), s.ID); err != nil {
			return nil, err
		}
	}
	c.snapshots[s.ID] = s
	c.writes++
	cp := *s
	return &cp, nil
}

func (c *FakeCloud) SnapshotByName(_ context.Context, name string) (*csi.Snapshot, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.call("SnapshotByName"); err != nil {
		return nil, err
	}
	for _, s := range c.snapshots {
		if s.Name == name {
			cp := *s
			return &cp, nil
		}
	}
	return nil, nil
}

func (c *FakeCloud) GetSnapshot(_ context.Context, id string) (*csi.Snapshot, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.call("GetSnapshot"); err != nil {
		return nil, err
	}
	s, ok := c.snapshots[id]
	if !ok {
		return nil, fmt.Errorf("snapshot %s: %w", id, csi.ErrNotFound)
	}
	cp := *s
	return &cp, nil
}

func (c *FakeCloud) DeleteSnapshot(_ context.Context, id string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.call("DeleteSnapshot"); err != nil {
		return err
	}
	if _, ok := c.snapshots[id]; !ok {
		return fmt.Errorf("snapshot %s: %w", id, csi.ErrNotFound)
	}
	if c.Hypervisor != nil {
		if err := c.Hypervisor.DeleteSnapshot(id); err != nil {
			return err
		}
	}
	delete(c.snapshots, id)
	c.writes++
	return nil
}

func (c *FakeCloud) ListSnapshots(_ context.Context, source string) ([]*csi.Snapshot, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.call("ListSnapshots"); err != nil {
		return nil, err
	}
	out := []*csi.Snapshot{}
	for _, s := range c.snapshots {
		if source == "" || s.Source == source {
			cp := *s
			out = append(out, &cp)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

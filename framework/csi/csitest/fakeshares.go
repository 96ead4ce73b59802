package csitest

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"

	"github.com/ccmkit/ccmkit/framework/csi"
)

// FakeSharesDriverName is FakeShares' driver name.
const FakeSharesDriverName = "fake-shares.csi.ccmkit.io"

// FakeSharesSingleNode is the StorageClass parameter that makes a
// FakeShares volume single-node ("true"), as a storage driver whose
// volumes one host mounts at a time.
const FakeSharesSingleNode = "singleNode"

// FakeShares is an in-memory shared-filesystem cloud and its
// csi.SharedFilesystem provider: each volume is a directory under Dir
// (the file server's export), which NodeMount has the framework
// bind-mount at the target, so that every target of a volume, on any
// node, holds the same files. It is what the kit's own tests run
// csi-sanity on for shared filesystems.
type FakeShares struct {
	// Dir holds the volumes' directories.
	Dir string
	// NodeID is this node's ID; "" is FakeNode.
	NodeID string
	// NFSServer, when not "", has NodeMount answer an NFS mount of
	// NFSServer:<the volume's directory> (for an NFSStandIn) instead of
	// a bind mount of the directory.
	NFSServer string

	mu      sync.Mutex
	next    int
	volumes map[string]*csi.Volume
	mounts  map[string]string // target → volume ID
}

var (
	_ csi.Provider           = (*FakeShares)(nil)
	_ csi.SharedFilesystem   = (*FakeShares)(nil)
	_ csi.Lister             = (*FakeShares)(nil)
	_ csi.ParameterValidator = (*FakeShares)(nil)
)

// NewFakeShares returns an empty FakeShares exporting its volumes from
// dir.
func NewFakeShares(dir string) *FakeShares {
	return &FakeShares{Dir: dir, volumes: map[string]*csi.Volume{}, mounts: map[string]string{}}
}

// Name is FakeSharesDriverName.
func (c *FakeShares) Name() string { return FakeSharesDriverName }

// Limits are 1 MiB steps, 1 GiB by default; no per-node limit.
func (c *FakeShares) Limits() csi.Limits {
	return csi.Limits{MinBytes: 1 << 20, StepBytes: 1 << 20, DefaultBytes: 1 << 30}
}

// TopologyKey is none.
func (c *FakeShares) TopologyKey() string { return "" }

// ValidateParameters takes FakeSharesSingleNode only.
func (c *FakeShares) ValidateParameters(params map[string]string) error {
	for k, v := range params {
		if k != FakeSharesSingleNode || (v != "true" && v != "false") {
			return fmt.Errorf("%s=%q: unknown parameter", k, v)
		}
	}
	return nil
}

// Create makes the volume's directory.
func (c *FakeShares) Create(_ context.Context, req csi.CreateRequest) (*csi.Volume, error) {
	single := req.Parameters[FakeSharesSingleNode] == "true"
	if req.MultiNode && single {
		return nil, fmt.Errorf("%w: %s volumes are single-node", csi.ErrUnsupported, FakeSharesSingleNode)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.next++
	id := fmt.Sprintf("share-%d", c.next)
	if err := os.MkdirAll(filepath.Join(c.Dir, id), 0o750); err != nil {
		return nil, err
	}
	v := &csi.Volume{ID: id, Name: req.Name, SizeBytes: req.SizeBytes, MultiNode: !single,
		Context: map[string]string{"export": id}}
	c.volumes[id] = v
	return clone(v), nil
}

func clone(v *csi.Volume) *csi.Volume {
	out := *v
	return &out
}

// Get returns volume id.
func (c *FakeShares) Get(_ context.Context, id string) (*csi.Volume, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.volumes[id]
	if !ok {
		return nil, fmt.Errorf("volume %s: %w", id, csi.ErrNotFound)
	}
	return clone(v), nil
}

// GetByName returns the volume named name.
func (c *FakeShares) GetByName(_ context.Context, name, _ string) (*csi.Volume, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, v := range c.volumes {
		if v.Name == name {
			return clone(v), nil
		}
	}
	return nil, nil
}

// Delete removes the volume and its files; ErrInUse while a target
// has it mounted.
func (c *FakeShares) Delete(_ context.Context, id string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.volumes[id]; !ok {
		return csi.ErrNotFound
	}
	for target, v := range c.mounts {
		if v == id {
			return fmt.Errorf("%w: mounted at %s", csi.ErrInUse, target)
		}
	}
	delete(c.volumes, id)
	return os.RemoveAll(filepath.Join(c.Dir, id))
}

// ListVolumes lists the volumes by ID.
func (c *FakeShares) ListVolumes(context.Context) ([]*csi.Volume, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]*csi.Volume, 0, len(c.volumes))
	for _, v := range c.volumes {
		out = append(out, clone(v))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// Node is this node.
func (c *FakeShares) Node(context.Context) (csi.NodeInfo, error) {
	return csi.NodeInfo{ID: cmp.Or(c.NodeID, FakeNode)}, nil
}

// NodeMount answers the volume's directory, to bind-mount; NotFound for
// a volume that is not there.
func (c *FakeShares) NodeMount(_ context.Context, req csi.MountRequest) (csi.MountSource, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.volumes[req.VolumeID]
	if !ok {
		return csi.MountSource{}, fmt.Errorf("volume %s: %w", req.VolumeID, csi.ErrNotFound)
	}
	if req.Context["export"] != "" && req.Context["export"] != v.Context["export"] {
		return csi.MountSource{}, fmt.Errorf("%w: volume_context export %q is not volume %s's", csi.ErrUnsupported, req.Context["export"], v.ID)
	}
	c.mounts[req.Target] = v.ID
	dir := filepath.Join(c.Dir, v.Context["export"])
	if c.NFSServer != "" {
		return csi.MountSource{Source: c.NFSServer + ":" + dir, FSType: "nfs", Options: []string{"vers=3", "hard"}}, nil
	}
	return csi.MountSource{Source: dir, Options: []string{"bind"}}, nil
}

// NodeUnmount forgets target.
func (c *FakeShares) NodeUnmount(_ context.Context, _, target string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.mounts, target)
	return nil
}

package csitest

import (
	"fmt"
	"slices"
	"sync"

	"k8s.io/mount-utils"
)

// NFSStandIn is the node's mounter for a host without an NFS client
// (this machine's kernel has none): it passes every mount to the real
// mounter but an NFS one ("nfs", "nfs4"), which it records and stands in
// for with a bind mount of the directory Export names for its source, the
// file server's export as the simulator keeps it. Everything the driver
// does up to the mount call is real, and so is everything after it
// (the mount table, unmount, statfs, the files): what is not exercised is
// the NFS mount itself — mount.nfs, the kernel's client, the protocol,
// and the options' effect.
type NFSStandIn struct {
	mount.Interface
	// Export returns the local directory that stands in for an NFS
	// source ("host:/path"); an error fails the mount, as a server that
	// does not export the path does.
	Export func(source string) (string, error)

	mu     sync.Mutex
	mounts []NFSMount
}

// NFSMount is an NFS mount the driver asked for.
type NFSMount struct {
	Source, Target, FSType string
	Options                []string
}

// NewNFSStandIn returns an NFSStandIn over the host's mounter.
func NewNFSStandIn(export func(source string) (string, error)) *NFSStandIn {
	return &NFSStandIn{Interface: mount.New(""), Export: export}
}

// Mount mounts, standing in for NFS.
func (n *NFSStandIn) Mount(source, target, fstype string, options []string) error {
	return n.MountSensitive(source, target, fstype, options, nil)
}

// MountSensitive mounts, standing in for NFS.
func (n *NFSStandIn) MountSensitive(source, target, fstype string, options, sensitive []string) error {
	if fstype != "nfs" && fstype != "nfs4" {
		return n.Interface.MountSensitive(source, target, fstype, options, sensitive)
	}
	dir, err := n.Export(source)
	if err != nil {
		return mount.NewMountError(mount.HasFilesystemErrors, "mount.%s: %s: %v", fstype, source, err)
	}
	bind := []string{"bind"}
	if slices.Contains(options, "ro") {
		bind = append(bind, "ro")
	}
	if err := n.Interface.Mount(dir, target, "", bind); err != nil {
		return fmt.Errorf("standing in for NFS %s with %s: %w", source, dir, err)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.mounts = append(n.mounts, NFSMount{Source: source, Target: target, FSType: fstype, Options: slices.Clone(options)})
	return nil
}

// Mounts are the NFS mounts asked for so far, in order.
func (n *NFSStandIn) Mounts() []NFSMount {
	n.mu.Lock()
	defer n.mu.Unlock()
	return slices.Clone(n.mounts)
}

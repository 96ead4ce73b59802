package csi

import (
	"slices"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
)

// Filesystems a mount capability may ask for; "" is DefaultFSType. They
// are the ones the CSI images' node tools make, check and grow
// (e2fsprogs and xfsprogs, hack/images): a filesystem the node cannot
// make is refused when the volume is created, not when it is staged.
var fsTypes = []string{"ext2", "ext3", "ext4", "xfs"}

// DefaultFSType is the filesystem a mount volume gets when its
// capability names none.
const DefaultFSType = "ext4"

// checkCapabilities validates volume capabilities (see checkCapability).
func (d *driver) checkCapabilities(caps []*csipb.VolumeCapability) error {
	if len(caps) == 0 {
		return missing("volume_capabilities")
	}
	for _, c := range caps {
		if err := d.checkCapability(c); err != nil {
			return err
		}
	}
	return nil
}

// checkCapability validates a volume capability. An Attacher's volumes
// attach to one node at a time, in mount access (a filesystem the node
// makes) or block access. A SharedFilesystem's volumes take every access
// mode (whether a volume takes the multi-node ones is its own: see
// multiNode), in mount access only, in the cloud's filesystem.
func (d *driver) checkCapability(c *csipb.VolumeCapability) error {
	if c == nil {
		return missing("volume_capability")
	}
	switch m := c.GetAccessMode().GetMode(); m {
	case csipb.VolumeCapability_AccessMode_SINGLE_NODE_WRITER,
		csipb.VolumeCapability_AccessMode_SINGLE_NODE_READER_ONLY,
		csipb.VolumeCapability_AccessMode_SINGLE_NODE_SINGLE_WRITER:
	case csipb.VolumeCapability_AccessMode_UNKNOWN:
		return missing("volume_capability.access_mode")
	default:
		if !d.sharedFS() {
			return invalid("access mode %s is not supported: a volume attaches to one node at a time", m)
		}
		if m != csipb.VolumeCapability_AccessMode_MULTI_NODE_READER_ONLY &&
			m != csipb.VolumeCapability_AccessMode_MULTI_NODE_SINGLE_WRITER &&
			m != csipb.VolumeCapability_AccessMode_MULTI_NODE_MULTI_WRITER {
			return invalid("access mode %s is not supported", m)
		}
	}
	switch {
	case c.GetBlock() != nil:
		if d.sharedFS() {
			return invalid("block access is not supported: %s volumes are shared filesystems", d.name)
		}
	case c.GetMount() != nil:
		if fs := c.GetMount().GetFsType(); fs != "" && !d.sharedFS() && !slices.Contains(fsTypes, fs) {
			return invalid("fs_type %q is not supported (supported: %v)", fs, fsTypes)
		}
	default:
		return missing("volume_capability.access_type (mount or block)")
	}
	return nil
}

// multiNode reports whether caps ask for a volume many nodes use at once.
func multiNode(caps ...*csipb.VolumeCapability) bool {
	return slices.ContainsFunc(caps, func(c *csipb.VolumeCapability) bool {
		switch c.GetAccessMode().GetMode() {
		case csipb.VolumeCapability_AccessMode_MULTI_NODE_READER_ONLY,
			csipb.VolumeCapability_AccessMode_MULTI_NODE_SINGLE_WRITER,
			csipb.VolumeCapability_AccessMode_MULTI_NODE_MULTI_WRITER:
			return true
		}
		return false
	})
}

// readOnly reports whether a capability (or the request) publishes a
// volume read-only.
func readOnly(c *csipb.VolumeCapability, requested bool) bool {
	switch c.GetAccessMode().GetMode() {
	case csipb.VolumeCapability_AccessMode_SINGLE_NODE_READER_ONLY,
		csipb.VolumeCapability_AccessMode_MULTI_NODE_READER_ONLY:
		return true
	}
	return requested
}

package simkit

// A Disk is a cloud volume as the host it is attached to sees it: what a
// simulator tells its Hypervisor.
type Disk struct {
	// ID is the cloud's ID of the volume.
	ID string
	// ByIDName is the name the host's udev gives the device under
	// /dev/disk/by-id, as the real cloud's volumes get it: DigitalOcean's
	// scsi-0DO_Volume_<volume name>, OpenStack's virtio-<id[:20]>,
	// Brightbox's virtio-<serial>.
	ByIDName string
	// SizeBytes is the volume's size.
	SizeBytes int64
	// Server is the ID of the server (droplet, instance) it is attached
	// to; "" when it is not attached.
	Server string
}

// A Hypervisor does, for a simulated cloud, what the real cloud's hosts do
// with a volume's blocks: a simulator calls it when a volume is created,
// attached, detached, resized, snapshotted or deleted, after the cloud's
// state says so and before the action reads as completed. A call that
// fails fails the action (the simulator answers it as the cloud answers a
// failed action). The zero Options of a simulator have none: volumes are
// then records only. framework/csi/csitest's loop-device hypervisor backs
// each volume with a sparse file and, while it is attached, a loop device
// linked under its ByIDName, so that a CSI driver's node side formats and
// mounts a real block device.
//
// Methods are called with the simulator's state lock held, one at a time.
type Hypervisor interface {
	// Create makes the volume's blocks: empty, or, with snapshot != "",
	// a copy of that snapshot's (see Snapshot).
	Create(d Disk, snapshot string) error
	// Attach makes the volume appear on d.Server under d.ByIDName.
	Attach(d Disk) error
	// Detach removes it from the server it was attached to (d.Server).
	Detach(d Disk) error
	// Resize grows the volume to d.SizeBytes, attached or not.
	Resize(d Disk) error
	// Snapshot copies the volume's blocks, as they are now, into a
	// snapshot with the cloud's ID snapshot.
	Snapshot(d Disk, snapshot string) error
	// DeleteSnapshot forgets a snapshot's blocks.
	DeleteSnapshot(snapshot string) error
	// Delete forgets the volume's blocks; it is detached first.
	Delete(d Disk) error
}

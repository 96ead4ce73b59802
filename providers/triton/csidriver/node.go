package csidriver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ccmkit/ccmkit/framework/csi"
	"github.com/ccmkit/ccmkit/providers/triton/internal/cloud"
)

// The node plugin knows its instance from the instance metadata, as every
// Triton instance reads it (mdata-client's mdata-get, over the metadata
// transport: /dev/ttyS1 on a hardware VM, a socket in an LX or native
// zone): sdc:uuid, the instance's UUID, and sdc:nics, its NICs as a JSON
// array, each with network_uuid and nic_tag (a fabric NIC's is
// sdc_overlay/<vnet>; cloud-init's SmartOS data source reads the same).
// mdata-get prints the value and exits 0, or exits 1 ("No metadata for
// 'key'"), 2 (an error) or 10 (try again).
const (
	mdataUUID = "sdc:uuid"
	mdataNICs = "sdc:nics"

	// fabricNICTag starts a fabric NIC's nic_tag: its overlay.
	fabricNICTag = "sdc_overlay"

	mdataTimeout  = 10 * time.Second
	maxMdataBytes = 1 << 20
)

// mdataNIC is one of sdc:nics' entries, the part the driver reads.
type mdataNIC struct {
	Interface   string `json:"interface"`
	NetworkUUID string `json:"network_uuid"`
	NICTag      string `json:"nic_tag"`
}

// readNodeMetadata reads this instance's UUID and NICs with command
// (TRITON_MDATA_GET): the node's ID is the UUID, its segment the network
// of its first fabric NIC ("" when it has none: no volume is reachable
// from it).
func readNodeMetadata(ctx context.Context, command string) (csi.NodeInfo, error) {
	fail := func(format string, args ...any) (csi.NodeInfo, error) {
		return csi.NodeInfo{}, fmt.Errorf("TRITON_MDATA_GET: the node plugin reads its instance UUID and NICs from the instance metadata: "+format, args...)
	}
	id, err := mdataGet(ctx, command, mdataUUID)
	if err != nil {
		return fail("%v", err)
	}
	if id = strings.TrimSpace(id); !cloud.IsUUID(id) {
		return fail("%s is %q, not an instance UUID", mdataUUID, truncateText(id, 40))
	}
	raw, err := mdataGet(ctx, command, mdataNICs)
	if err != nil {
		return fail("%v", err)
	}
	var nics []*mdataNIC
	if err := json.Unmarshal([]byte(raw), &nics); err != nil {
		return fail("%s is not a JSON array of NICs: %v", mdataNICs, err)
	}
	node := csi.NodeInfo{ID: id}
	for _, n := range nics {
		if n == nil || !strings.HasPrefix(n.NICTag, fabricNICTag) {
			continue
		}
		if !cloud.IsUUID(n.NetworkUUID) {
			return fail("%s: fabric NIC %s has network_uuid %q, not a network UUID", mdataNICs, truncateText(n.Interface, 20), truncateText(n.NetworkUUID, 40))
		}
		node.Segment = n.NetworkUUID
		break
	}
	return node, nil
}

// mdataGet runs command key and returns what it printed. The command gets
// the process's environment but the TRITON_* and SDC_* variables: a
// process serving both sides holds the key in its own.
func mdataGet(ctx context.Context, command, key string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, mdataTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, command, key)
	cmd.Env = slices.DeleteFunc(cmd.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, "TRITON_") || strings.HasPrefix(kv, "SDC_")
	})
	var stdout, stderr capped
	stdout.max, stderr.max = maxMdataBytes, 4096
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	msg := strings.TrimSpace(stderr.String())
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		return "", fmt.Errorf("%s %s exited %d: %s", command, key, exit.ExitCode(), truncateText(msg, 200))
	case err != nil:
		return "", fmt.Errorf("%s %s: %w", command, key, err)
	case stdout.over:
		return "", fmt.Errorf("%s %s: more than %d bytes", command, key, maxMdataBytes)
	}
	return stdout.String(), nil
}

// capped is a buffer that keeps the first max bytes written to it.
type capped struct {
	bytes.Buffer
	max  int
	over bool
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.max - c.Len(); len(p) > room {
		c.over = true
		c.Buffer.Write(p[:max(room, 0)])
		return len(p), nil
	}
	return c.Buffer.Write(p)
}

// Node is this instance: its UUID and its fabric network, read from the
// instance metadata at Init.
func (p *Driver) Node(context.Context) (csi.NodeInfo, error) {
	if p.node.ID == "" {
		return csi.NodeInfo{}, errors.New("this process serves no node (mode controller)")
	}
	return p.node, nil
}

// nfsOptions are the options a volume is mounted with, Triton's own: an
// LX instance mounts the volumes it was created with vers=3,sec=sys
// (smartos-live's lxinit hook that reads sdc:volumes), as RFD 26's storage
// zones serve NFSv3. A StorageClass's mountOptions come after them (e.g.
// nolock, for a node plugin without rpc.statd).
var nfsOptions = []string{"vers=3", "sec=sys"}

// nfsSource is an NFS export as filesystem_path gives it: a host (an
// address or a name; a bracketed IPv6 address) and an absolute path,
// nothing mount would take for an option or a second source.
var nfsSource = regexp.MustCompile(`^([A-Za-z0-9][A-Za-z0-9.-]*|\[[0-9A-Fa-f:.]+\]):/[^\s,]*$`)

// NodeMount answers the volume's NFS export, which the framework mounts
// at the target (mount -t nfs -o vers=3,sec=sys <filesystem_path>
// <target>): the volume_context's filesystem_path, which CreateVolume
// gave; the node reads nothing from CloudAPI (it has no credentials).
func (p *Driver) NodeMount(_ context.Context, req csi.MountRequest) (csi.MountSource, error) {
	src, ok := req.Context[ContextFilesystemPath]
	switch {
	case !ok || src == "":
		return csi.MountSource{}, status.Errorf(codes.InvalidArgument,
			"volume %s: the volume_context has no %s (the volume's NFS export, which CreateVolume gives; a PersistentVolume made by hand sets it in volumeAttributes)",
			truncateText(req.VolumeID, 80), ContextFilesystemPath)
	case !nfsSource.MatchString(src):
		return csi.MountSource{}, status.Errorf(codes.InvalidArgument, "volume %s: volume_context %s %q is not an NFS export (host:/path)",
			truncateText(req.VolumeID, 80), ContextFilesystemPath, truncateText(src, 120))
	}
	return csi.MountSource{Source: src, FSType: "nfs", Options: append([]string(nil), nfsOptions...)}, nil
}

// NodeUnmount has nothing to release: the framework unmounted the target,
// and NodeMount prepared nothing else.
func (p *Driver) NodeUnmount(context.Context, string, string) error { return nil }

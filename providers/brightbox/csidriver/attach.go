package csidriver

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"time"

	brightbox "github.com/brightbox/gobrightbox/v2"
	"github.com/brightbox/gobrightbox/v2/enums/volumestatus"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ccmkit/ccmkit/framework/csi"
	"github.com/ccmkit/ccmkit/providers/brightbox/internal/cloud"
)

// Volume operations this controller sent and has not seen done.
const (
	opAttach = "attach"
	opDetach = "detach"
)

// volumeOp is an attach or detach this controller sent, which the volume
// did not show done yet. The framework runs one operation per volume at a
// time, so a volume has at most one. It is kept in memory only: a new
// controller sends the request again, which the API accepts (or refuses
// while it is busy: csi.ErrPending).
type volumeOp struct {
	kind, server string
	at           time.Time
}

// pendingOp reports whether this controller sent op of kind for volume id
// to server within attachWait: the retry waits for it rather than send
// it again; an older one is taken as lost (the cloud dropped it).
func (p *Driver) pendingOp(id, kind, server string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	op, ok := p.ops[id]
	return ok && op.kind == kind && op.server == server && p.now().Sub(op.at) < attachWait
}

func (p *Driver) remember(id, kind, server string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.ops[id] = volumeOp{kind: kind, server: server, at: p.now()}
}

func (p *Driver) forget(id string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.ops, id)
}

// publishContext is what the node gets: the volume's serial, which names
// its device (DevicePath), as the volume shows it.
func (p *Driver) publishContext(v *brightbox.Volume) map[string]string {
	return map[string]string{p.Name() + "/serial": cmp.Or(v.Serial, v.ID)}
}

// checkNode refuses a node ID that is not a server ID: NodeGetInfo
// reports server IDs only.
func checkNode(node string) error {
	if !isNodeID(node) {
		return status.Errorf(codes.InvalidArgument, "node ID %q is not a Brightbox server ID (srv-xxxxx)", truncateText(node, 80))
	}
	return nil
}

// Attach attaches volume id to server node: the publish context when it
// is attached there (also when it was already); csi.ErrAttachedElsewhere
// when it is attached to another server; csi.ErrPending while the volume
// is being created or the attach (or a detach this controller sent) is
// under way; csi.ErrLimit when the server has Brightbox's 6 volumes;
// csi.ErrNodeNotFound when the server does not exist. One GET and one
// POST; a retry while the attach runs, one GET; a refused attach, one GET
// of the server to say why.
func (p *Driver) Attach(ctx context.Context, id, node string) (map[string]string, error) {
	c, err := p.api()
	if err != nil {
		return nil, err
	}
	if !isVolumeID(id) {
		return nil, noSuchVolume(id)
	}
	if err := checkNode(node); err != nil {
		return nil, err
	}
	v, err := p.getVolume(ctx, c, id)
	if err != nil {
		return nil, err
	}
	attachedTo := serverOf(v)
	switch {
	case volumeGone(v):
		return nil, fmt.Errorf("volume %s is %s: %w", id, v.Status, csi.ErrNotFound)
	case v.Status == volumestatus.Attached && attachedTo == node:
		if p.pendingOp(id, opDetach, node) {
			return nil, csi.Pending("a detach of volume %s from server %s is under way", id, node)
		}
		p.forget(id)
		return p.publishContext(v), nil
	case v.Status == volumestatus.Attached || attachedTo != "":
		return nil, fmt.Errorf("volume %s is attached to server %s (detach it first): %w", id, attachedTo, csi.ErrAttachedElsewhere)
	case v.Status == volumestatus.Creating:
		return nil, csi.Pending("volume %s is being created", id)
	case v.Status == volumestatus.Failed:
		return nil, fmt.Errorf("volume %s has failed", id)
	case p.pendingOp(id, opAttach, node):
		return nil, csi.Pending("the attach of volume %s to server %s is under way", id, node)
	}
	got, err := cloud.One(ctx, "volumes.attach", func(ctx context.Context) (*brightbox.Volume, error) {
		return c.AttachVolume(ctx, id, brightbox.VolumeAttachment{Server: node})
	})
	switch {
	case err != nil:
		return nil, p.attachRefused(ctx, c, id, node, err)
	case got == nil || got.ID != id:
		return nil, fmt.Errorf("attaching volume %s: malformed response: not that volume", id)
	case got.Status == volumestatus.Attached && serverOf(got) == node:
		p.forget(id)
		return p.publishContext(got), nil
	}
	p.remember(id, opAttach, node)
	return nil, csi.Pending("the attach of volume %s to server %s is accepted", id, node)
}

// attachRefused says why the API refused to attach volume id (just read)
// to server node, reading the server: gone (csi.ErrNodeNotFound), full
// (csi.ErrLimit), or the volume busy (csi.ErrPending for a 409).
func (p *Driver) attachRefused(ctx context.Context, c *brightbox.Client, id, node string, err error) error {
	code := cloud.APIStatus(err)
	switch {
	case cloud.IsNotFound(err):
		// The volume was there a moment ago.
		return fmt.Errorf("volume %s: %w (%w)", id, csi.ErrNotFound, err)
	case code != http.StatusConflict && code != http.StatusUnprocessableEntity:
		return fmt.Errorf("attaching volume %s to server %s: %w", id, node, err)
	}
	srv, serr := cloud.One(ctx, "servers.get", func(ctx context.Context) (*brightbox.Server, error) { return c.Server(ctx, node) })
	switch {
	case cloud.IsNotFound(serr):
		return fmt.Errorf("server %s: %w (%w)", node, csi.ErrNodeNotFound, serr)
	case serr != nil:
		return fmt.Errorf("attaching volume %s to server %s: %w (and reading the server: %w)", id, node, err, serr)
	case srv == nil || srv.ID != node:
		return fmt.Errorf("reading server %s: malformed response: not that server", node)
	case cloud.ServerGone(srv):
		return fmt.Errorf("server %s is %s: %w", node, srv.Status, csi.ErrNodeNotFound)
	case len(srv.Volumes) >= apiVolumesPerServer:
		return fmt.Errorf("server %s has %d volumes attached (Brightbox attaches up to %d): %w", node, len(srv.Volumes),
			apiVolumesPerServer, csi.ErrLimit)
	case code == http.StatusConflict:
		return csi.Pending("the API refused to attach volume %s to server %s for now (%s)", id, node, apiMessage(err))
	}
	return fmt.Errorf("attaching volume %s to server %s: %w", id, node, err)
}

// Detach detaches volume id from server node: nil when it is not attached
// there (anymore), unless an attach there this controller sent is under
// way (csi.ErrPending: it must end first); csi.ErrPending while the
// detach runs. One GET and one POST; a retry while the detach runs, one
// GET.
func (p *Driver) Detach(ctx context.Context, id, node string) error {
	c, err := p.api()
	if err != nil {
		return err
	}
	if !isVolumeID(id) {
		return noSuchVolume(id)
	}
	if !isNodeID(node) {
		return fmt.Errorf("node %q is not a Brightbox server ID: %w", truncateText(node, 80), csi.ErrNodeNotFound)
	}
	v, err := p.getVolume(ctx, c, id)
	if err != nil {
		return err
	}
	if volumeGone(v) {
		p.forget(id)
		return fmt.Errorf("volume %s is %s: %w", id, v.Status, csi.ErrNotFound)
	}
	if v.Status != volumestatus.Attached || serverOf(v) != node {
		if serverOf(v) == "" && p.pendingOp(id, opAttach, node) {
			return csi.Pending("an attach of volume %s to server %s is under way: it must end before the detach", id, node)
		}
		p.forget(id)
		return nil
	}
	if p.pendingOp(id, opDetach, node) {
		return csi.Pending("the detach of volume %s from server %s is under way", id, node)
	}
	got, err := cloud.One(ctx, "volumes.detach", func(ctx context.Context) (*brightbox.Volume, error) { return c.DetachVolume(ctx, id) })
	switch {
	case cloud.IsNotFound(err):
		p.forget(id)
		return fmt.Errorf("volume %s: %w (%w)", id, csi.ErrNotFound, err)
	case cloud.APIStatus(err) == http.StatusConflict:
		return csi.Pending("the API refused to detach volume %s from server %s for now (%s)", id, node, apiMessage(err))
	case err != nil:
		return fmt.Errorf("detaching volume %s from server %s: %w", id, node, err)
	case got == nil || got.ID != id:
		return fmt.Errorf("detaching volume %s: malformed response: not that volume", id)
	case got.Status != volumestatus.Attached || serverOf(got) != node:
		p.forget(id)
		return nil
	}
	p.remember(id, opDetach, node)
	return csi.Pending("the detach of volume %s from server %s is accepted", id, node)
}

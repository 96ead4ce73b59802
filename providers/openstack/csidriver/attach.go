package csidriver

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/volumeattach"

	"github.com/ccmkit/ccmkit/framework/cloudapi"
	"github.com/ccmkit/ccmkit/framework/csi"
	"github.com/ccmkit/ccmkit/providers/openstack/internal/cloud"
)

// PublishContextDevicePath is the publish context key of the device Nova
// gave an attached volume (e.g. /dev/vdb), as cinder-csi-plugin sets it.
// The node finds the device by its serial first (DevicePath): this name
// is the last resort.
const PublishContextDevicePath = "DevicePath"

// publishContext is what the node gets for a volume attached as att.
func publishContext(att cinderAttachment) map[string]string {
	if att.Device == "" {
		return map[string]string{}
	}
	return map[string]string{PublishContextDevicePath: att.Device}
}

// Attach attaches volume id to server node with Nova's
// os-volume_attachments, as cinder-csi-plugin does: the publish context
// (the device Cinder shows) once Cinder says the volume is in-use on that
// server, also when it was already; csi.ErrPending while Cinder shows it
// attaching, or busy otherwise (creating, detaching, ...);
// csi.ErrAttachedElsewhere when it is attached to another server (but
// for a multiattach volume, attached with Nova microversion 2.60);
// csi.ErrLimit when the server takes no more disks; csi.ErrNodeNotFound
// when Nova says the server is not there. One GET of the volume; to
// attach, one POST and one GET more.
func (p *Driver) Attach(ctx context.Context, id, node string) (map[string]string, error) {
	c, compute, err := p.api()
	if err != nil {
		return nil, err
	}
	v, err := getVolume(ctx, c, id)
	if err != nil {
		return nil, err
	}
	if att, ok := v.attachment(node); ok {
		if v.Status == volumeInUse {
			return publishContext(att), nil
		}
		return nil, csi.Pending("volume %s is %s on server %s", id, v.Status, node)
	}
	switch {
	case len(v.Attachments) > 0 && !v.Multiattach:
		return nil, fmt.Errorf("volume %s is attached to server %s (detach it first): %w", id, v.Attachments[0].ServerID, csi.ErrAttachedElsewhere)
	case v.Status == volumeAvailable, v.Status == volumeInUse && v.Multiattach:
	case failed(v.Status):
		return nil, fmt.Errorf("volume %s cannot be attached: its status is %s", id, v.Status)
	default:
		return nil, csi.Pending("volume %s is %s", id, v.Status)
	}
	if v.Multiattach {
		compute = withMicroversion(compute, multiattachMicroversion)
	}
	err = volumeattach.Create(cloudapi.WithOperation(ctx, "servers.volume_attachments.create"), compute, pathID(node),
		volumeattach.CreateOpts{VolumeID: id}).Err
	if err != nil {
		return nil, p.attachError(ctx, compute, id, node, err)
	}
	// Nova attaches in the background: Cinder says when it is done.
	if v, err = getVolume(ctx, c, id); err != nil {
		return nil, err
	}
	if att, ok := v.attachment(node); ok && v.Status == volumeInUse {
		return publishContext(att), nil
	}
	return nil, csi.Pending("Nova is attaching volume %s to server %s (%s)", id, node, v.Status)
}

// attachError answers a refused attach: a 404 with the volume there a
// moment ago is the server (Nova says so for it), a full server
// csi.ErrLimit, a server or volume busy csi.ErrPending.
func (p *Driver) attachError(ctx context.Context, compute *gophercloud.ServiceClient, id, node string, err error) error {
	switch {
	case cloud.IsAPINotFound(err):
		// Nova answers 404 for the server and for the volume: ask it
		// about the server.
		_, gerr := servers.Get(cloudapi.WithOperation(ctx, "servers.get"), compute, pathID(node)).Extract()
		switch {
		case cloud.IsAPINotFound(gerr):
			return &notFoundError{what: "server " + node, kind: csi.ErrNodeNotFound, err: cloud.ServiceError(gerr)}
		case gerr != nil:
			return wrapAPI(gerr, "attaching volume %s to server %s: %v; reading the server", id, node, cloud.ServiceError(err))
		}
		return orNotFound(err, "volume %s", id)
	case has(err, http.StatusForbidden, msgDiskDevices):
		return fmt.Errorf("server %s: %w (Nova: %w)", node, csi.ErrLimit, cloud.ServiceError(err))
	case isStatus(err, http.StatusConflict), has(err, http.StatusBadRequest, msgStatusMust):
		// The server is in a task (409), or the volume changed state.
		return csi.Pending("attaching volume %s to server %s: %v", id, node, cloud.ServiceError(err))
	}
	return wrapAPI(err, "attaching volume %s to server %s", id, node)
}

// Detach detaches volume id from server node with Nova, as
// cinder-csi-plugin does: nil once Cinder shows it attached there no more
// (or the volume is gone, or Nova says the server or the attachment is);
// csi.ErrPending while Cinder shows it detaching, or attaching (to a
// server it does not show yet). One GET of the volume; to detach, one
// DELETE and one GET more.
func (p *Driver) Detach(ctx context.Context, id, node string) error {
	c, compute, err := p.api()
	if err != nil {
		return err
	}
	v, err := getVolume(ctx, c, id)
	if err != nil {
		return err
	}
	if _, ok := v.attachment(node); !ok {
		if v.Status == volumeAttaching || v.Status == volumeReserved {
			return csi.Pending("volume %s is %s", id, v.Status)
		}
		return nil
	}
	if v.Status != volumeInUse {
		return csi.Pending("volume %s is %s on server %s", id, v.Status, node)
	}
	err = volumeattach.Delete(cloudapi.WithOperation(ctx, "servers.volume_attachments.delete"), compute, pathID(node), pathID(id)).ExtractErr()
	switch {
	case cloud.IsAPINotFound(err):
		// The server is gone, or Nova has no such attachment: detached.
		return nil
	case isStatus(err, http.StatusConflict), has(err, http.StatusBadRequest, msgStatusMust):
		return csi.Pending("detaching volume %s from server %s: %v", id, node, cloud.ServiceError(err))
	case err != nil:
		return wrapAPI(err, "detaching volume %s from server %s", id, node)
	}
	v, err = getVolume(ctx, c, id)
	switch {
	case errors.Is(err, csi.ErrNotFound):
		return nil
	case err != nil:
		return err
	}
	if _, ok := v.attachment(node); !ok {
		return nil
	}
	return csi.Pending("Nova is detaching volume %s from server %s (%s)", id, node, v.Status)
}

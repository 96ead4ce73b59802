package csidriver

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/ccmkit/ccmkit/framework/csi"
)

// The server metadata service's endpoint for this server's ID, under its
// base URL (BRIGHTBOX_METADATA_URL): "Every server has access to its own
// metadata via the EC2 compatible metadata server. Data such as hostname,
// instance-id and ssh keys are available" (brightbox.com/docs/guides/cli/
// user-data). That the instance-id is the server ID is inferred (EC2's
// layout, and the server's hostname is its ID), not verified; the driver
// checks it has a server ID's shape.
const metadataInstanceIDPath = "/latest/meta-data/instance-id"

const (
	metadataTimeout  = 10 * time.Second
	maxMetadataBytes = 4096
)

// ByIDPrefix starts the name a Brightbox volume's device gets under
// /dev/disk/by-id on the server: virtio-<serial>. Inferred, not verified:
// Brightbox documents that a volume's serial (default its ID, vol-xxxxx)
// names it under /dev/disk/by-id, its brightbox-volume-device-plugin
// matches names there ending in vol-xxxxx, and udev names a virtio disk
// virtio-<serial>.
const ByIDPrefix = "virtio-"

// validSerial is a volume serial: at most 20 characters (Brightbox's
// docs), those Brightbox's Terraform provider takes; nothing that leaves
// its path segment.
var validSerial = regexp.MustCompile(`^[A-Za-z0-9_.+-]{1,20}$`)

// readNodeMetadata reads this server's ID from the metadata service at
// base, with a plain client that never carries the API's token.
func readNodeMetadata(ctx context.Context, base string) (csi.NodeInfo, error) {
	rawURL := base + metadataInstanceIDPath
	fail := func(format string, args ...any) (csi.NodeInfo, error) {
		return csi.NodeInfo{}, fmt.Errorf("the node plugin needs its server ID from the metadata service (BRIGHTBOX_METADATA_URL): "+format, args...)
	}
	ctx, cancel := context.WithTimeout(ctx, metadataTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return fail("%v", err)
	}
	// No proxy: the link-local metadata service is never behind one.
	hc := &http.Client{Timeout: metadataTimeout, Transport: &http.Transport{Proxy: nil}}
	resp, err := hc.Do(req)
	if err != nil {
		return fail("%v", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxMetadataBytes+1))
	if err != nil {
		return fail("reading %s: %v", rawURL, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fail("%s: %s", rawURL, resp.Status)
	}
	id := strings.TrimSpace(string(body))
	if !isNodeID(id) {
		return fail("%s: %q is not a server ID (srv-xxxxx)", rawURL, truncateText(id, 40))
	}
	return csi.NodeInfo{ID: id}, nil
}

// Node is this server: its ID (the node ID ControllerPublishVolume gets),
// read from the metadata service at Init; no topology segment.
func (p *Driver) Node(context.Context) (csi.NodeInfo, error) {
	if p.node.ID == "" {
		return csi.NodeInfo{}, fmt.Errorf("this process serves no node (mode controller)")
	}
	return p.node, nil
}

// DevicePath is where the server finds an attached volume:
// <by-id>/virtio-<serial>, the serial from the publish context (the
// volume's, when Attach read it), else the volume ID, which the driver's
// volumes keep as their serial (it never sets one: the API's default is
// the ID, so a volume's device can be found from its ID alone).
func (p *Driver) DevicePath(byID, id string, publishContext map[string]string) (string, error) {
	key := p.Name() + "/serial"
	serial := publishContext[key]
	switch {
	case serial == "" && isVolumeID(id) && len(id) <= 20:
		serial = id
	case serial == "":
		return "", fmt.Errorf("volume %s: the publish context has no %s", truncateText(id, 80), key)
	case !validSerial.MatchString(serial):
		return "", fmt.Errorf("volume %s: %s %q is not a Brightbox volume serial", truncateText(id, 80), key, truncateText(serial, 40))
	}
	return filepath.Join(byID, ByIDPrefix+serial), nil
}

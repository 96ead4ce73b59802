package csidriver

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"

	"github.com/ccmkit/ccmkit/framework/csi"
	"github.com/ccmkit/ccmkit/providers/digitalocean/internal/cloud"
)

// The droplet metadata service's endpoints, under its base URL
// (DIGITALOCEAN_METADATA_URL): plain text, the droplet's own.
const (
	metadataIDPath     = "/metadata/v1/id"
	metadataRegionPath = "/metadata/v1/region"
)

// ByIDPrefix starts the name a DigitalOcean volume's device gets under
// /dev/disk/by-id: scsi-0DO_Volume_<volume name>.
const ByIDPrefix = "scsi-0DO_Volume_"

// readNodeMetadata reads this droplet's ID and region from the metadata
// service at base, with a plain client that never carries the API token.
func readNodeMetadata(ctx context.Context, base string) (csi.NodeInfo, error) {
	id, err := dropletIDFromMetadata(ctx, base+metadataIDPath)
	if err != nil {
		return csi.NodeInfo{}, fmt.Errorf("the node plugin needs its droplet ID from the droplet metadata service (DIGITALOCEAN_METADATA_URL, --metadata-url): %w", err)
	}
	region, err := cloud.RegionFromMetadata(ctx, base+metadataRegionPath)
	if err != nil {
		return csi.NodeInfo{}, fmt.Errorf("the node plugin needs its region from the droplet metadata service (DIGITALOCEAN_METADATA_URL, --metadata-url): %w", err)
	}
	return csi.NodeInfo{ID: strconv.Itoa(id), Segment: region}, nil
}

// dropletIDFromMetadata reads the droplet ID, a bare number, from rawURL.
func dropletIDFromMetadata(ctx context.Context, rawURL string) (int, error) {
	text, err := cloud.ReadMetadata(ctx, rawURL, "the droplet ID")
	if err != nil {
		return 0, err
	}
	id, err := strconv.Atoi(text)
	if err != nil || id <= 0 {
		return 0, fmt.Errorf("droplet metadata service %s: %q is not a droplet ID", rawURL, cloud.Truncate(text, 40))
	}
	return id, nil
}

// Node is this droplet: its ID (the node ID ControllerPublishVolume gets)
// and region, read from the metadata service at Init.
func (p *Driver) Node(context.Context) (csi.NodeInfo, error) {
	if p.node.ID == "" {
		return csi.NodeInfo{}, fmt.Errorf("this process serves no node (mode controller)")
	}
	return p.node, nil
}

// DevicePath is where the droplet finds an attached volume:
// <by-id>/scsi-0DO_Volume_<name>, the name from the publish context
// (csi-digitalocean's <driver name>/volume-name).
func (p *Driver) DevicePath(byID, id string, publishContext map[string]string) (string, error) {
	key := p.Name() + "/volume-name"
	name := publishContext[key]
	switch {
	case name == "":
		return "", fmt.Errorf("volume %s: the publish context has no %s", id, key)
	case !validVolumeName.MatchString(name):
		return "", fmt.Errorf("volume %s: %s %q is not a DigitalOcean volume name", id, key, cloud.Truncate(name, 80))
	}
	return filepath.Join(byID, ByIDPrefix+name), nil
}

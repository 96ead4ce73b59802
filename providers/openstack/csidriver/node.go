package csidriver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/uuid"
	"k8s.io/klog/v2"
	"k8s.io/mount-utils"
	"k8s.io/utils/exec"

	"github.com/ccmkit/ccmkit/framework/csi"
	"github.com/ccmkit/ccmkit/providers/openstack/internal/cloud"
)

// ByIDPrefix starts the name an OpenStack volume's device gets under
// /dev/disk/by-id on a KVM host: virtio-<the first 20 characters of the
// volume ID>, its virtio serial.
const ByIDPrefix = "virtio-"

// The instance metadata: Nova's metadata service, or the config drive
// (the filesystem labelled config-2), each holding
// openstack/latest/meta_data.json.
const (
	configDriveLabel   = "config-2"
	configDriveByLabel = "/dev/disk/by-label/" + configDriveLabel
	maxMetadataBytes   = 1 << 20
	metadataTimeout    = 10 * time.Second
)

// instanceMetadata is the part of meta_data.json the node plugin reads.
type instanceMetadata struct {
	UUID             string `json:"uuid"`
	AvailabilityZone string `json:"availability_zone"`
}

// parseMetadata decodes meta_data.json: its uuid must be a server ID.
func parseMetadata(data []byte) (csi.NodeInfo, error) {
	var md instanceMetadata
	if err := json.Unmarshal(data, &md); err != nil {
		return csi.NodeInfo{}, fmt.Errorf("malformed meta_data.json: %w", err)
	}
	if uuid.Validate(md.UUID) != nil {
		return csi.NodeInfo{}, fmt.Errorf("malformed meta_data.json: uuid %q is not a server ID", truncate(md.UUID, 40))
	}
	// The zone as the Node's topology.kubernetes.io/zone label has it
	// (cinder-csi-plugin sanitizes it the same way).
	return csi.NodeInfo{ID: md.UUID, Segment: cloud.SanitizeLabelValue(md.AvailabilityZone)}, nil
}

// readNodeMetadata reads this server's ID and availability zone from the
// sources of [Metadata] search-order, in order, as cinder-csi-plugin does:
// the first that answers wins. The error names every source's failure
// and the settings that point at them.
func readNodeMetadata(ctx context.Context, m *cloud.MetadataSection, env *Config) (csi.NodeInfo, error) {
	timeout := m.RequestTimeout
	if timeout <= 0 {
		timeout = metadataTimeout
	}
	var errs []error
	for source := range strings.SplitSeq(m.SearchOrder, ",") {
		var (
			info csi.NodeInfo
			err  error
		)
		switch strings.TrimSpace(source) {
		case cloud.MetadataConfigDrive:
			info, err = readConfigDrive(ctx, env.ConfigDriveDir)
			if err != nil {
				err = fmt.Errorf("config drive (OS_CONFIG_DRIVE_DIR, --config-drive-dir): %w", err)
			}
		case cloud.MetadataService:
			info, err = readMetadataService(ctx, env.MetadataURL+metadataPath, timeout)
			if err != nil {
				err = fmt.Errorf("metadata service (OS_METADATA_URL, --metadata-url): %w", err)
			}
		default:
			continue // checked by Validate
		}
		if err == nil {
			klog.FromContext(ctx).V(2).Info("Read the instance metadata", "source", strings.TrimSpace(source), "server", info.ID, "zone", info.Segment)
			return info, nil
		}
		errs = append(errs, err)
	}
	return csi.NodeInfo{}, fmt.Errorf("the node plugin needs its server ID from the instance metadata ([Metadata] search-order %s): %w",
		m.SearchOrder, errors.Join(errs...))
}

// readMetadataService reads meta_data.json from rawURL with a plain
// client that never carries a token and ignores proxies (the link-local
// service is never behind one).
func readMetadataService(ctx context.Context, rawURL string, timeout time.Duration) (csi.NodeInfo, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return csi.NodeInfo{}, fmt.Errorf("metadata request: %w", err)
	}
	hc := &http.Client{Timeout: timeout, Transport: &http.Transport{Proxy: nil}}
	resp, err := hc.Do(req)
	if err != nil {
		return csi.NodeInfo{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxMetadataBytes+1))
	switch {
	case err != nil:
		return csi.NodeInfo{}, fmt.Errorf("reading %s: %w", rawURL, err)
	case resp.StatusCode != http.StatusOK:
		return csi.NodeInfo{}, fmt.Errorf("%s: %s", rawURL, resp.Status)
	case len(body) > maxMetadataBytes:
		return csi.NodeInfo{}, fmt.Errorf("%s: larger than %d bytes", rawURL, maxMetadataBytes)
	}
	return parseMetadata(body)
}

// readConfigDrive reads meta_data.json from the config drive: under dir
// when it is mounted there, else from the filesystem labelled config-2,
// mounted read-only on a temporary directory for the time it takes, as
// cinder-csi-plugin does.
func readConfigDrive(ctx context.Context, dir string) (csi.NodeInfo, error) {
	if dir != "" {
		return readMetadataFile(filepath.Join(dir, metadataPath))
	}
	dev, err := findConfigDrive(ctx)
	if err != nil {
		return csi.NodeInfo{}, err
	}
	mnt, err := os.MkdirTemp("", "config-drive-")
	if err != nil {
		return csi.NodeInfo{}, err
	}
	defer os.Remove(mnt)
	m := mount.New("")
	if err := m.Mount(dev, mnt, "iso9660", []string{"ro"}); err != nil {
		if verr := m.Mount(dev, mnt, "vfat", []string{"ro"}); verr != nil {
			return csi.NodeInfo{}, fmt.Errorf("mounting %s: %w", dev, err)
		}
	}
	defer func() {
		if err := m.Unmount(mnt); err != nil {
			klog.FromContext(ctx).Error(err, "Unmounting the config drive", "path", mnt)
		}
	}()
	return readMetadataFile(filepath.Join(mnt, metadataPath))
}

// findConfigDrive is the device of the filesystem labelled config-2.
func findConfigDrive(ctx context.Context) (string, error) {
	if _, err := os.Stat(configDriveByLabel); err == nil {
		return configDriveByLabel, nil
	}
	out, err := exec.New().CommandContext(ctx, "blkid", "-l", "-t", "LABEL="+configDriveLabel, "-o", "device").Output()
	dev := strings.TrimSpace(string(out))
	switch {
	case err != nil:
		return "", fmt.Errorf("no filesystem labelled %s (blkid: %w)", configDriveLabel, err)
	case dev == "":
		return "", fmt.Errorf("no filesystem labelled %s", configDriveLabel)
	}
	return dev, nil
}

func readMetadataFile(path string) (csi.NodeInfo, error) {
	f, err := os.Open(path)
	if err != nil {
		return csi.NodeInfo{}, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxMetadataBytes+1))
	switch {
	case err != nil:
		return csi.NodeInfo{}, fmt.Errorf("reading %s: %w", path, err)
	case len(data) > maxMetadataBytes:
		return csi.NodeInfo{}, fmt.Errorf("%s: larger than %d bytes", path, maxMetadataBytes)
	}
	return parseMetadata(data)
}

// Node is this server: its ID (the node ID ControllerPublishVolume gets)
// and availability zone, read from the instance metadata at Init (or, in
// a process serving both whose Init could not, now), with the
// --additional-topology segments.
func (p *Driver) Node(ctx context.Context) (csi.NodeInfo, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.node.ID == "" {
		if !p.nodeLazy {
			return csi.NodeInfo{}, errors.New("this process serves no node (mode controller)")
		}
		node, err := readNodeMetadata(ctx, &p.cfg.Metadata, &p.env)
		if err != nil {
			return csi.NodeInfo{}, err
		}
		p.node, p.nodeLazy = node, false
	}
	info := p.node
	if len(p.flags.additionalTopology) > 0 {
		info.Topology = maps.Clone(p.flags.additionalTopology)
	}
	return info, nil
}

// deviceNames are the names an attached volume's device may have under
// /dev/disk/by-id, by the serial the hypervisor gives it, in the order
// cinder-csi-plugin tries them: KVM virtio-blk (the serial is the first
// 20 characters of the ID, or all of it), KVM virtio-scsi, and ESXi.
func deviceNames(id string) []string {
	short := id[:min(len(id), 20)]
	names := []string{ByIDPrefix + short, ByIDPrefix + id, "scsi-0QEMU_QEMU_HARDDISK_" + short, "scsi-0QEMU_QEMU_HARDDISK_" + id,
		"wwn-0x" + strings.ReplaceAll(id, "-", "")}
	out := names[:0]
	for _, n := range names {
		if len(out) == 0 || out[len(out)-1] != n {
			out = append(out, n)
		}
	}
	return out
}

// sysBlock is where the kernel shows block devices (their virtio serial).
var sysBlock = "/sys/class/block"

// DevicePath is where the server finds an attached volume: the first of
// its by-id names (deviceNames) under byID that exists, as
// cinder-csi-plugin finds it; else the device Nova named (the publish
// context's DevicePath), if it exists and is no other volume's (its
// virtio serial, if it has one, is this volume's); else its first by-id
// name, which the framework waits for (udev may not have made it yet).
func (p *Driver) DevicePath(byID, id string, publishContext map[string]string) (string, error) {
	if id == "" || strings.ContainsAny(id, "/\x00") || id == "." || id == ".." {
		return "", fmt.Errorf("%q is not a Cinder volume ID", truncate(id, 80))
	}
	names := deviceNames(id)
	for _, n := range names {
		if path := filepath.Join(byID, n); exists(path) {
			return path, nil
		}
	}
	if dev := publishContext[PublishContextDevicePath]; filepath.IsAbs(dev) && exists(dev) && serialMatches(dev, id) {
		return dev, nil
	}
	return filepath.Join(byID, names[0]), nil
}

// serialMatches reports whether device dev may be volume id's: it has no
// virtio serial, or one id starts with.
func serialMatches(dev, id string) bool {
	resolved, err := filepath.EvalSymlinks(dev)
	if err != nil {
		return false
	}
	serial, err := os.ReadFile(filepath.Join(sysBlock, filepath.Base(resolved), "serial"))
	if err != nil {
		return true
	}
	s := strings.TrimSpace(string(serial))
	return s == "" || strings.HasPrefix(id, s)
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

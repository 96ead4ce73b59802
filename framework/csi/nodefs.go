package csi

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"golang.org/x/sys/unix"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"k8s.io/klog/v2"
	"k8s.io/mount-utils"
)

// NodeGetVolumeStats answers statfs of a mounted volume, or the size of
// a published block device.
func (s *node) NodeGetVolumeStats(_ context.Context, req *csipb.NodeGetVolumeStatsRequest) (*csipb.NodeGetVolumeStatsResponse, error) {
	id, path := req.GetVolumeId(), req.GetVolumePath()
	switch {
	case id == "":
		return nil, missing("volume_id")
	case path == "":
		return nil, missing("volume_path")
	}
	block, err := s.published(path)
	if err != nil {
		return nil, err
	}
	if block {
		size, err := deviceSize(path)
		if err != nil {
			return nil, status.Errorf(codes.Internal, "size of %s: %v", path, err)
		}
		return &csipb.NodeGetVolumeStatsResponse{Usage: []*csipb.VolumeUsage{{Unit: csipb.VolumeUsage_BYTES, Total: size}}}, nil
	}
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return nil, status.Errorf(codes.Internal, "statfs %s: %v", path, err)
	}
	bsize := st.Bsize
	return &csipb.NodeGetVolumeStatsResponse{Usage: []*csipb.VolumeUsage{{
		Unit:      csipb.VolumeUsage_BYTES,
		Total:     int64(st.Blocks) * bsize,
		Available: int64(st.Bavail) * bsize,
		Used:      int64(st.Blocks-st.Bfree) * bsize,
	}, {
		Unit:      csipb.VolumeUsage_INODES,
		Total:     int64(st.Files),
		Available: int64(st.Ffree),
		Used:      int64(st.Files - st.Ffree),
	}}}, nil
}

// published reports whether a volume is published at path as a block
// device (or else a mounted filesystem); NotFound when neither is there.
func (s *node) published(path string) (block bool, err error) {
	fi, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return false, status.Errorf(codes.NotFound, "no volume at %s", path)
	} else if err != nil {
		return false, status.Errorf(codes.Internal, "%s: %v", path, err)
	}
	if fi.Mode()&os.ModeDevice != 0 {
		return true, nil
	}
	mounted, err := isMounted(s.d.opts.Mounter, path)
	if err != nil {
		return false, status.Errorf(codes.Internal, "%s: %v", path, err)
	}
	if !mounted {
		return false, status.Errorf(codes.NotFound, "no volume is mounted at %s", path)
	}
	return false, nil
}

// NodeExpandVolume grows the filesystem of a mounted volume to its
// device's size (a block volume has nothing to grow).
func (s *node) NodeExpandVolume(ctx context.Context, req *csipb.NodeExpandVolumeRequest) (*csipb.NodeExpandVolumeResponse, error) {
	id, path := req.GetVolumeId(), req.GetVolumePath()
	switch {
	case id == "":
		return nil, missing("volume_id")
	case path == "":
		return nil, missing("volume_path")
	}
	block, err := s.published(path)
	if err != nil {
		return nil, err
	}
	release, err := s.d.locks.acquire("node volume", id)
	if err != nil {
		return nil, err
	}
	defer release()
	dev := path
	if !block && req.GetVolumeCapability().GetBlock() == nil {
		if dev, _, err = mount.GetDeviceNameFromMount(s.d.opts.Mounter, path); err != nil || dev == "" {
			return nil, status.Errorf(codes.Internal, "the device mounted at %s: %v", path, err)
		}
		if _, err := s.growOnline(ctx, dev, path); err != nil {
			return nil, status.Errorf(codes.Internal, "growing the filesystem at %s: %v", path, err)
		}
	}
	size, err := deviceSize(dev)
	if err != nil {
		return nil, status.Errorf(codes.Internal, "size of %s: %v", dev, err)
	}
	return &csipb.NodeExpandVolumeResponse{CapacityBytes: size}, nil
}

// growOnline grows a mounted filesystem that is smaller than its device.
func (s *node) growOnline(ctx context.Context, dev, path string) (bool, error) {
	need, err := s.needsGrowth(dev)
	if err != nil || !need {
		return false, err
	}
	if _, err := s.d.resizer.Resize(dev, path); err != nil {
		return false, err
	}
	klog.FromContext(ctx).V(2).Info("Grew the filesystem", "device", dev, "path", path)
	return true, nil
}

// growOffline grows an unmounted ext filesystem smaller than its device
// (e2fsck -f, resize2fs): online growth of ext4 needs CAP_SYS_RESOURCE,
// which a node plugin's container may lack; offline it needs nothing.
// Other filesystems grow online once mounted (xfs can only).
func (s *node) growOffline(ctx context.Context, dev string) error {
	format, err := s.d.opts.Mounter.GetDiskFormat(dev)
	if err != nil || !strings.HasPrefix(format, "ext") {
		return err
	}
	need, err := s.needsGrowth(dev)
	if err != nil || !need {
		return err
	}
	ex := s.d.opts.Mounter.Exec
	if out, err := ex.Command("e2fsck", "-f", "-p", dev).CombinedOutput(); err != nil && exitCode(err) > 1 {
		return fmt.Errorf("e2fsck -f -p %s: %w: %s", dev, err, bytes.TrimSpace(out))
	}
	if out, err := ex.Command("resize2fs", dev).CombinedOutput(); err != nil {
		return fmt.Errorf("resize2fs %s: %w: %s", dev, err, bytes.TrimSpace(out))
	}
	klog.FromContext(ctx).V(2).Info("Grew the filesystem before mounting it", "device", dev)
	return nil
}

func exitCode(err error) int {
	var ee interface{ ExitStatus() int }
	if errors.As(err, &ee) {
		return ee.ExitStatus()
	}
	return -1
}

// needsGrowth reports whether the filesystem on dev is smaller than dev:
// for ext, from its superblock; for other filesystems the resize tool
// decides (xfs_growfs does nothing when there is nothing to do).
func (s *node) needsGrowth(dev string) (bool, error) {
	format, err := s.d.opts.Mounter.GetDiskFormat(dev)
	if err != nil || format == "" {
		return false, err
	}
	if !strings.HasPrefix(format, "ext") {
		return s.d.resizer.NeedResize(dev, "")
	}
	out, err := s.d.opts.Mounter.Exec.Command("dumpe2fs", "-h", dev).Output()
	if err != nil {
		return false, fmt.Errorf("dumpe2fs -h %s: %w", dev, err)
	}
	fsBytes, blockSize, err := extSize(out)
	if err != nil {
		return false, fmt.Errorf("dumpe2fs -h %s: %w", dev, err)
	}
	devBytes, err := deviceSize(dev)
	if err != nil {
		return false, err
	}
	// resize2fs grows by whole blocks.
	return devBytes-fsBytes >= blockSize, nil
}

// extSize is the size of an ext filesystem and its block size, from
// `dumpe2fs -h`.
func extSize(out []byte) (int64, int64, error) {
	var count, size int64
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		switch k {
		case "Block count":
			count = n
		case "Block size":
			size = n
		default:
			continue
		}
		if err != nil {
			return 0, 0, fmt.Errorf("%s: %w", k, err)
		}
	}
	if count == 0 || size == 0 {
		return 0, 0, errors.New("no block count and size")
	}
	return count * size, size, nil
}

// deviceSize is the size in bytes of a block device (or a file).
func deviceSize(path string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	return f.Seek(0, io.SeekEnd)
}

package csi

import (
	"fmt"
	"slices"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// roundCapacity returns the size to create for a capacity range within l:
// the required bytes (or l.DefaultBytes, or l.MinBytes, when none are
// required) raised to l.MinBytes and rounded up to a multiple of
// l.StepBytes. A range the cloud cannot meet answers OutOfRange, a
// malformed one InvalidArgument.
func roundCapacity(r *csipb.CapacityRange, l Limits) (int64, error) {
	required, limit := r.GetRequiredBytes(), r.GetLimitBytes()
	switch {
	case required < 0 || limit < 0:
		return 0, status.Errorf(codes.InvalidArgument, "capacity_range: negative bytes (required %d, limit %d)", required, limit)
	case limit > 0 && required > limit:
		return 0, status.Errorf(codes.InvalidArgument, "capacity_range: required_bytes %d exceeds limit_bytes %d", required, limit)
	}
	size := required
	if size == 0 {
		size = l.DefaultBytes
		if limit > 0 && size > limit {
			size = floorStep(limit, l.StepBytes)
		}
	}
	size = roundStep(max(size, l.MinBytes), l.StepBytes)
	if l.MaxBytes > 0 && size > l.MaxBytes {
		return 0, status.Errorf(codes.OutOfRange, "capacity_range: %s is more than the largest volume, %s", bytesString(size), bytesString(l.MaxBytes))
	}
	if limit > 0 && size > limit {
		return 0, status.Errorf(codes.OutOfRange, "capacity_range: no volume size from %s to %s (sizes are multiples of %s, at least %s)",
			bytesString(required), bytesString(limit), bytesString(l.StepBytes), bytesString(l.MinBytes))
	}
	if size <= 0 {
		return 0, status.Errorf(codes.OutOfRange, "capacity_range: no size requested and the driver has no default")
	}
	return size, nil
}

// fitsRange reports whether an existing volume of size bytes satisfies
// a capacity range (for name idempotency).
func fitsRange(size int64, r *csipb.CapacityRange) bool {
	if size < r.GetRequiredBytes() {
		return false
	}
	return r.GetLimitBytes() == 0 || size <= r.GetLimitBytes()
}

func roundStep(n, step int64) int64 {
	if step <= 0 || n%step == 0 {
		return n
	}
	return (n/step + 1) * step
}

func floorStep(n, step int64) int64 {
	if step <= 0 {
		return n
	}
	return n / step * step
}

func bytesString(n int64) string {
	const gi, mi = 1 << 30, 1 << 20
	switch {
	case n > 0 && n%gi == 0:
		return fmt.Sprintf("%dGiB", n/gi)
	case n > 0 && n%mi == 0:
		return fmt.Sprintf("%dMiB", n/mi)
	}
	return fmt.Sprintf("%d bytes", n)
}

// chooseSegment picks the topology segment (the value of key) a new
// volume goes to: the first preferred segment that is also requisite
// (when requisites are given), else the first requisite one; "" when the
// request says nothing about key, which lets the provider use its
// default.
func chooseSegment(key string, req *csipb.TopologyRequirement) string {
	if key == "" || req == nil {
		return ""
	}
	requisite := segments(key, req.GetRequisite())
	for _, p := range segments(key, req.GetPreferred()) {
		if len(requisite) == 0 || slices.Contains(requisite, p) {
			return p
		}
	}
	if len(requisite) > 0 {
		return requisite[0]
	}
	return ""
}

func segments(key string, ts []*csipb.Topology) []string {
	var out []string
	for _, t := range ts {
		if v := t.GetSegments()[key]; v != "" {
			out = append(out, v)
		}
	}
	return out
}

// accessible is the accessible_topology of a volume in segment.
func (d *driver) accessible(segment string) []*csipb.Topology {
	if d.key == "" || segment == "" {
		return nil
	}
	return []*csipb.Topology{{Segments: map[string]string{d.key: segment}}}
}

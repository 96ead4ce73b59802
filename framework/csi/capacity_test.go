package csi

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

const (
	mib = int64(1) << 20
	gib = int64(1) << 30
)

func TestRoundCapacity(t *testing.T) {
	do := Limits{MinBytes: gib, StepBytes: gib, MaxBytes: 16 * 1024 * gib, DefaultBytes: 16 * gib}
	for _, tc := range []struct {
		name             string
		limits           Limits
		required, limit  int64
		want             int64
		wantCode         codes.Code
		wantMsgSubstring string
	}{
		{name: "none: the default", limits: do, want: 16 * gib},
		{name: "rounded up to a step", limits: do, required: gib + 1, want: 2 * gib},
		{name: "exact step", limits: do, required: 5 * gib, want: 5 * gib},
		{name: "raised to the minimum", limits: do, required: 10 * mib, want: gib},
		{name: "limit only: the default when it fits", limits: do, limit: 20 * gib, want: 16 * gib},
		{name: "limit only, below the default: the largest step within", limits: do, limit: 3*gib + 5, want: 3 * gib},
		{name: "limit below the minimum", limits: do, limit: 100 * mib, wantCode: codes.OutOfRange},
		{name: "rounding breaks the limit", limits: do, required: gib + 1, limit: gib + 2, wantCode: codes.OutOfRange},
		{name: "required over the largest", limits: do, required: 17 * 1024 * gib, wantCode: codes.OutOfRange, wantMsgSubstring: "16384GiB"},
		{name: "required over limit", limits: do, required: 2 * gib, limit: gib, wantCode: codes.InvalidArgument},
		{name: "negative", limits: do, required: -1, wantCode: codes.InvalidArgument},
		{name: "no step, no minimum", limits: Limits{DefaultBytes: 5}, required: 7, want: 7},
		{name: "no size and no default", limits: Limits{}, wantCode: codes.OutOfRange},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := roundCapacity(&csipb.CapacityRange{RequiredBytes: tc.required, LimitBytes: tc.limit}, tc.limits)
			if status.Code(err) != tc.wantCode {
				t.Fatalf("roundCapacity = %d, %v; want code %s", got, err, tc.wantCode)
			}
			if err == nil && got != tc.want {
				t.Errorf("roundCapacity = %d, want %d", got, tc.want)
			}
			if tc.wantMsgSubstring != "" && !strings.Contains(status.Convert(err).Message(), tc.wantMsgSubstring) {
				t.Errorf("message %q does not say %q", status.Convert(err).Message(), tc.wantMsgSubstring)
			}
		})
	}
}

func TestChooseSegment(t *testing.T) {
	const key = "region"
	seg := func(vals ...string) []*csipb.Topology {
		var out []*csipb.Topology
		for _, v := range vals {
			out = append(out, &csipb.Topology{Segments: map[string]string{key: v, "other": "x"}})
		}
		return out
	}
	for _, tc := range []struct {
		name string
		key  string
		req  *csipb.TopologyRequirement
		want string
	}{
		{name: "no requirement: the provider's default", key: key},
		{name: "no topology key", req: &csipb.TopologyRequirement{Requisite: seg("nyc1")}},
		{name: "requisite only: the first", key: key, req: &csipb.TopologyRequirement{Requisite: seg("nyc1", "ams3")}, want: "nyc1"},
		{name: "preferred within requisite", key: key, req: &csipb.TopologyRequirement{Requisite: seg("nyc1", "ams3"), Preferred: seg("ams3", "nyc1")}, want: "ams3"},
		{name: "preferred outside requisite is ignored", key: key, req: &csipb.TopologyRequirement{Requisite: seg("nyc1"), Preferred: seg("sfo2")}, want: "nyc1"},
		{name: "preferred only", key: key, req: &csipb.TopologyRequirement{Preferred: seg("fra1")}, want: "fra1"},
		{name: "segments without the key", key: key, req: &csipb.TopologyRequirement{Requisite: []*csipb.Topology{{Segments: map[string]string{"zone": "a"}}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := chooseSegment(tc.key, tc.req); got != tc.want {
				t.Errorf("chooseSegment = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestCloudErrorCodes(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want codes.Code
	}{
		{Pending("attach action in progress"), codes.Aborted},
		{fmt.Errorf("droplet 7: %w", ErrAttachedElsewhere), codes.FailedPrecondition},
		{ErrInUse, codes.FailedPrecondition},
		{fmt.Errorf("wrapped: %w", ErrLimit), codes.ResourceExhausted},
		{ErrNotFound, codes.NotFound},
		{ErrNodeNotFound, codes.NotFound},
		{errors.New("500 Internal Server Error"), codes.Internal},
		{fmt.Errorf("get: %w", context.DeadlineExceeded), codes.DeadlineExceeded},
		{status.Error(codes.Unavailable, "server locked"), codes.Unavailable},
	} {
		err := cloudError(tc.err, "attaching volume %s", "v1")
		if got := status.Code(err); got != tc.want {
			t.Errorf("cloudError(%v) = %s, want %s", tc.err, got, tc.want)
		}
		if msg := status.Convert(err).Message(); !strings.Contains(msg, "attaching volume v1") {
			t.Errorf("cloudError(%v) message %q does not say what failed", tc.err, msg)
		}
	}
	if cloudError(nil, "x") != nil {
		t.Error("cloudError(nil) is not nil")
	}
}

func TestInflight(t *testing.T) {
	f := newInflight()
	release, err := f.acquire("volume", "v1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.acquire("volume", "v1"); status.Code(err) != codes.Aborted {
		t.Errorf("second acquire of v1: %v, want Aborted", err)
	}
	other, err := f.acquire("volume", "v2")
	if err != nil {
		t.Errorf("acquire of v2 while v1 is held: %v", err)
	}
	if r, err := f.acquire("volume name", "v1"); err != nil {
		t.Errorf("a name that is also an ID: %v", err)
	} else {
		r()
	}
	release()
	other()
	if r, err := f.acquire("volume", "v1"); err != nil {
		t.Errorf("acquire after release: %v", err)
	} else {
		r()
	}
}

func TestSocketPath(t *testing.T) {
	for in, want := range map[string]string{
		"unix:///csi/csi.sock": "/csi/csi.sock",
		"unix:/csi/csi.sock":   "/csi/csi.sock",
		"unix://csi.sock":      "csi.sock",
		"/var/lib/csi.sock":    "/var/lib/csi.sock",
	} {
		if got, err := SocketPath(in); err != nil || got != want {
			t.Errorf("SocketPath(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"tcp://127.0.0.1:10000", "unix://", ""} {
		if got, err := SocketPath(in); err == nil {
			t.Errorf("SocketPath(%q) = %q, want an error", in, got)
		}
	}
}

func TestExtSize(t *testing.T) {
	out := []byte("Filesystem volume name:   <none>\nBlock count:              24576\nReserved block count:     0\nBlock size:               4096\n")
	size, block, err := extSize(out)
	if err != nil || size != 24576*4096 || block != 4096 {
		t.Errorf("extSize = %d, %d, %v", size, block, err)
	}
	if _, _, err := extSize([]byte("garbage")); err == nil {
		t.Error("extSize of garbage: no error")
	}
}

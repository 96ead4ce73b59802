package csitest

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/textlogger"

	"github.com/ccmkit/ccmkit/framework/csi"
)

// LoggedDriver is a driver a provider's test serves against its simulated
// cloud at -v=10, where every API request is logged with its (redacted)
// headers and bodies: what it logged, and the error messages of the calls
// the test recorded (Code), are where a credential must never be.
type LoggedDriver struct {
	*Driver
	// Log is what the driver logged.
	Log *LogBuffer

	t    testing.TB
	mu   sync.Mutex
	errs []string
}

// StartLogged serves p in all modes until the test ends, as StartDriver
// does, logging at -v=10 into Log. When the test ends, after the driver
// stopped, it fails the test if any of secrets is in the log or in an
// error message Code recorded, or if the log has no API request (then
// the log was not taken at -v=10, and the check would cover nothing).
func StartLogged(t testing.TB, p csi.Provider, secrets ...string) *LoggedDriver {
	t.Helper()
	d := &LoggedDriver{Log: &LogBuffer{}, t: t}
	// Registered before StartDriver's cleanups, so it runs after them.
	t.Cleanup(func() { d.checkSecrets(t, secrets) })
	d.Driver = StartDriver(t, csi.Options{Provider: p, Logger: d.Log.Logger()}, 0)
	return d
}

func (d *LoggedDriver) checkSecrets(t testing.TB, secrets []string) {
	t.Helper()
	log := d.Log.String()
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, s := range secrets {
		if strings.Contains(log, s) {
			t.Errorf("the credential %q is in the driver's log", s)
		}
		for _, msg := range d.errs {
			if strings.Contains(msg, s) {
				t.Errorf("the credential %q is in an error: %s", s, msg)
			}
		}
	}
	if !strings.Contains(log, "Cloud API request") {
		t.Errorf("the log has no API request: was it taken at -v=10?")
	}
}

// Code records err's message, for the check of the credentials, and
// returns its gRPC code (OK for nil).
func (d *LoggedDriver) Code(err error) codes.Code {
	if err != nil {
		d.mu.Lock()
		d.errs = append(d.errs, err.Error())
		d.mu.Unlock()
	}
	return status.Code(err)
}

// Publish attaches volume id to node (ControllerPublishVolume) as a
// filesystem volume of the default type, ext4, in the test's context.
func (d *LoggedDriver) Publish(id, node string) (*csipb.ControllerPublishVolumeResponse, error) {
	return d.Controller.ControllerPublishVolume(d.t.Context(), &csipb.ControllerPublishVolumeRequest{
		VolumeId: id, NodeId: node, VolumeCapability: MountCapability("ext4")})
}

// Unpublish detaches volume id from node (ControllerUnpublishVolume) in
// the test's context.
func (d *LoggedDriver) Unpublish(id, node string) error {
	_, err := d.Controller.ControllerUnpublishVolume(d.t.Context(), &csipb.ControllerUnpublishVolumeRequest{VolumeId: id, NodeId: node})
	return err
}

// CheckRefused fails t unless err, recorded (Code), has the gRPC code
// want and a message that names each of naming: a call refused for a bad
// argument must say which.
func (d *LoggedDriver) CheckRefused(t testing.TB, err error, want codes.Code, naming ...string) {
	t.Helper()
	if got := d.Code(err); got != want {
		t.Errorf("%v, want %v", err, want)
	}
	msg := status.Convert(err).Message()
	for _, n := range naming {
		if !strings.Contains(msg, n) {
			t.Errorf("message %q does not name %q", msg, n)
		}
	}
}

// BadCreate is a CreateVolume a provider must refuse before any API
// call: its StorageClass parameters or capacity range are wrong.
type BadCreate struct {
	Name          string
	Parameters    map[string]string
	CapacityRange *csipb.CapacityRange
	// Want is the code of the answer, whose message names each of
	// Naming.
	Want   codes.Code
	Naming []string
}

// CheckBadCreates runs each of cases, a subtest each, as a CreateVolume
// "pvc-bad" with a mount capability: it must be refused (CheckRefused)
// before any request reaches the cloud, whose requests counts them (the
// simulator's).
func (d *LoggedDriver) CheckBadCreates(t *testing.T, requests func() int, cases []BadCreate) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			before := requests()
			_, err := d.Controller.CreateVolume(t.Context(), &csipb.CreateVolumeRequest{Name: "pvc-bad", Parameters: tc.Parameters,
				CapacityRange: tc.CapacityRange, VolumeCapabilities: []*csipb.VolumeCapability{MountCapability("")}})
			d.CheckRefused(t, err, tc.Want, tc.Naming...)
			if n := requests() - before; n != 0 {
				t.Errorf("%d API requests; want none", n)
			}
		})
	}
}

// UntilDone calls f until it answers anything but Aborted (the cloud
// still working), as the sidecars retry it, at most 10 times more; it
// returns how many calls were answered Aborted and the last error, each
// recorded (Code).
func (d *LoggedDriver) UntilDone(f func() error) (aborted int, err error) {
	for {
		err := f()
		if d.Code(err) != codes.Aborted || aborted == 10 {
			return aborted, err
		}
		aborted++
	}
}

// Lifecycle runs the lifecycle of n volumes one after another, as the
// sidecars drive it: CreateVolume (create(i)), ControllerPublishVolume to
// node (with the request's first capability), ControllerUnpublishVolume
// and DeleteVolume, each retried while answered Aborted (UntilDone; any
// other error fails t). It logs each call's API requests per volume, by
// operation, from stats (the simulator's request counts), and returns
// the API requests per volume in all and how many calls were answered
// Aborted.
func (d *LoggedDriver) Lifecycle(t testing.TB, n int, node string, create func(i int) *csipb.CreateVolumeRequest,
	stats func() map[string]int) (perVolume float64, aborted int) {
	t.Helper()
	ctx := t.Context()
	calls := map[string]map[string]int{}
	step := func(name string, f func() error) {
		t.Helper()
		before := stats()
		a, err := d.UntilDone(f)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		aborted += a
		if calls[name] == nil {
			calls[name] = map[string]int{}
		}
		for op, n := range DiffStats(before, stats()) {
			calls[name][op] += n
		}
	}
	for i := range n {
		req := create(i)
		var id string
		step("1 CreateVolume", func() error {
			vol, err := d.Controller.CreateVolume(ctx, req)
			id = vol.GetVolume().GetVolumeId()
			return err
		})
		step("2 ControllerPublishVolume", func() error {
			_, err := d.Controller.ControllerPublishVolume(ctx, &csipb.ControllerPublishVolumeRequest{
				VolumeId: id, NodeId: node, VolumeCapability: req.GetVolumeCapabilities()[0]})
			return err
		})
		step("3 ControllerUnpublishVolume", func() error {
			_, err := d.Controller.ControllerUnpublishVolume(ctx, &csipb.ControllerUnpublishVolumeRequest{VolumeId: id, NodeId: node})
			return err
		})
		step("4 DeleteVolume", func() error {
			_, err := d.Controller.DeleteVolume(ctx, &csipb.DeleteVolumeRequest{VolumeId: id})
			return err
		})
	}
	total := 0
	for _, name := range slices.Sorted(maps.Keys(calls)) {
		sum, ops := 0, []string{}
		for _, op := range slices.Sorted(maps.Keys(calls[name])) {
			sum += calls[name][op]
			ops = append(ops, fmt.Sprintf("%s %.1f", op, float64(calls[name][op])/float64(n)))
		}
		total += sum
		t.Logf("%-28s %.1f calls per volume: %s", name[2:], float64(sum)/float64(n), strings.Join(ops, ", "))
	}
	perVolume = float64(total) / float64(n)
	t.Logf("lifecycle: %.1f API calls per volume (%d CSI calls answered Aborted and retried)", perVolume, aborted)
	return perVolume, aborted
}

// DiffStats is what a simulator served between two of its Stats: the
// requests by operation, the operations with none left out.
func DiffStats(before, after map[string]int) map[string]int {
	out := map[string]int{}
	for op, n := range after {
		if d := n - before[op]; d > 0 {
			out[op] = d
		}
	}
	return out
}

// Logger is a logger at -v=10 writing into l: every API request is
// logged, with its redacted headers and bodies.
func (l *LogBuffer) Logger() klog.Logger {
	return textlogger.NewLogger(textlogger.NewConfig(textlogger.Verbosity(10), textlogger.Output(l)))
}

// MountCapability is a single-node-writer mount capability with fsType
// ("" for the driver's default).
func MountCapability(fsType string) *csipb.VolumeCapability { return mountCap(fsType) }

package csitest_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ccmkit/ccmkit/framework/csi"
	"github.com/ccmkit/ccmkit/framework/csi/csitest"
)

// recorder is a test whose failures are recorded instead of reported,
// for the tests of the kit's checks.
type recorder struct {
	*testing.T
	mu     sync.Mutex
	failed []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failed = append(r.failed, fmt.Sprintf(format, args...))
}

func (r *recorder) Error(args ...any) { r.Errorf("%s", fmt.Sprint(args...)) }

// failures runs check in a subtest, the kit's checks reporting to a
// recorder, and returns what they reported once the subtest (and its
// cleanups) ended.
func failures(t *testing.T, check func(t testing.TB)) string {
	t.Helper()
	var r *recorder
	t.Run("check", func(t *testing.T) {
		r = &recorder{T: t}
		check(r)
	})
	return strings.Join(r.failed, "\n")
}

// loggingCloud is FakeCloud with an Init that logs a request as a
// provider's API client does (at -v=4 and more) and answers err.
type loggingCloud struct {
	*csitest.FakeCloud
	headers string
	err     error
}

func (c loggingCloud) Init(_ context.Context, env *csi.Env) error {
	env.Logger.V(4).Info("Cloud API request", "requestHeaders", c.headers)
	return c.err
}

// TestStartLogged: the driver logs at -v=10; a credential in its log or
// in an error Code recorded fails the test, and so does a log without an
// API request.
func TestStartLogged(t *testing.T) {
	const secret = "the-secret-9d2c"
	if got := failures(t, func(t testing.TB) {
		d := csitest.StartLogged(t, loggingCloud{FakeCloud: csitest.NewFakeCloud(nil), headers: "Bearer REDACTED"}, secret)
		_, err := d.Controller.CreateVolume(t.Context(), &csipb.CreateVolumeRequest{Name: "pvc-1",
			VolumeCapabilities: []*csipb.VolumeCapability{csitest.MountCapability("")}})
		if d.Code(err) != codes.OK {
			t.Errorf("CreateVolume: %v", err)
		}
		if d.Code(status.Error(codes.NotFound, "no such volume")) != codes.NotFound {
			t.Errorf("Code does not answer the code")
		}
	}); got != "" {
		t.Errorf("a driver that kept the secret failed the test:\n%s", got)
	}

	got := failures(t, func(t testing.TB) {
		d := csitest.StartLogged(t, loggingCloud{FakeCloud: csitest.NewFakeCloud(nil), headers: "Bearer " + secret}, secret)
		d.Code(status.Error(codes.Unauthenticated, "token "+secret+" refused"))
	})
	for _, want := range []string{"is in the driver's log", "is in an error: rpc error: code = Unauthenticated"} {
		if !strings.Contains(got, want) {
			t.Errorf("the check of a driver that told the secret does not say %q:\n%s", want, got)
		}
	}
	if got := failures(t, func(t testing.TB) { csitest.StartLogged(t, csitest.NewFakeCloud(nil), secret) }); !strings.Contains(got, "no API request") {
		t.Errorf("the check of a log without API requests: %q", got)
	}
}

// TestUntilDone: a call is retried while it answers Aborted, at most 10
// times more, and each error is recorded for the credential check.
func TestUntilDone(t *testing.T) {
	d := &csitest.LoggedDriver{}
	calls := 0
	aborted, err := d.UntilDone(func() error {
		if calls++; calls < 3 {
			return status.Error(codes.Aborted, "still attaching")
		}
		return nil
	})
	if aborted != 2 || err != nil || calls != 3 {
		t.Errorf("UntilDone: %d Aborted, %v, %d calls; want 2, nil, 3", aborted, err, calls)
	}
	calls = 0
	aborted, err = d.UntilDone(func() error { calls++; return status.Error(codes.Aborted, "forever") })
	if aborted != 10 || status.Code(err) != codes.Aborted || calls != 11 {
		t.Errorf("UntilDone of a call always Aborted: %d Aborted, %v, %d calls; want 10, Aborted, 11", aborted, err, calls)
	}
}

// TestLifecycle: the lifecycle of each volume runs to the end, retrying
// the Aborted attaches and detaches, and counts the calls per volume.
func TestLifecycle(t *testing.T) {
	cloud := csitest.NewFakeCloud(nil)
	cloud.PendingActions = 1
	d := csitest.StartLogged(t, loggingCloud{FakeCloud: cloud})
	stats := func() map[string]int {
		out := map[string]int{}
		for _, op := range []string{"Create", "Attach", "Detach", "Delete"} {
			out[op] = cloud.Calls(op)
		}
		return out
	}
	perVolume, aborted := d.Lifecycle(t, 3, csitest.FakeNode, func(i int) *csipb.CreateVolumeRequest {
		return &csipb.CreateVolumeRequest{Name: fmt.Sprintf("pvc-%d", i), VolumeCapabilities: []*csipb.VolumeCapability{csitest.MountCapability("ext4")}}
	}, stats)
	// Attach and detach each answer Aborted once: 2 calls each.
	if perVolume != 6 || aborted != 6 || len(cloud.Volumes()) != 0 {
		t.Errorf("Lifecycle: %.1f calls per volume, %d Aborted, %d volumes left; want 6, 6, 0", perVolume, aborted, len(cloud.Volumes()))
	}
}

// TestServeUntilListening: Init's error is returned, nil once the driver
// listens; a credential in either fails the test.
func TestServeUntilListening(t *testing.T) {
	const secret = "the-secret-71ae"
	if err := csitest.ServeUntilListening(t, loggingCloud{FakeCloud: csitest.NewFakeCloud(nil)}, csi.ModeController, secret); err != nil {
		t.Errorf("ServeUntilListening: %v", err)
	}
	refused := errors.New("XYZ_TOKEN: refused")
	if err := csitest.ServeUntilListening(t, loggingCloud{FakeCloud: csitest.NewFakeCloud(nil), err: refused}, csi.ModeAll); !errors.Is(err, refused) {
		t.Errorf("ServeUntilListening of a failing Init: %v, want %v", err, refused)
	}
	got := failures(t, func(t testing.TB) {
		_ = csitest.ServeUntilListening(t, loggingCloud{FakeCloud: csitest.NewFakeCloud(nil), headers: secret}, csi.ModeController, secret)
	})
	if !strings.Contains(got, "is in the log or the error") {
		t.Errorf("the check of a log with the secret: %q", got)
	}
}

// TestCheckSanity: each access type must pass specs and fail none, and
// the access types run must be the ones asked for.
func TestCheckSanity(t *testing.T) {
	ok := csitest.Counts{Passed: 50, Skipped: 3}
	for _, tc := range []struct {
		name        string
		res         csitest.Result
		accessTypes []string
		want        string
	}{
		{name: "both passed", res: csitest.Result{ByAccessType: map[string]csitest.Counts{"mount": ok, "block": ok},
			SkipReasons: map[string]int{"no snapshots": 4, "no cloning": 2}}},
		{name: "one failed", res: csitest.Result{ByAccessType: map[string]csitest.Counts{"mount": ok, "block": {Passed: 49, Failed: 1}}},
			want: "block: {Passed:49 Failed:1 Skipped:0 Pending:0}"},
		{name: "none passed", res: csitest.Result{ByAccessType: map[string]csitest.Counts{"mount": ok, "block": {Skipped: 53}}},
			want: "block: {Passed:0"},
		{name: "block not run", res: csitest.Result{ByAccessType: map[string]csitest.Counts{"mount": ok}},
			want: "access types run: [mount], want [block mount]"},
		{name: "mount only", res: csitest.Result{ByAccessType: map[string]csitest.Counts{"mount": ok}}, accessTypes: []string{"mount"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := failures(t, func(t testing.TB) { csitest.CheckSanity(t, tc.res, tc.accessTypes...) })
			if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
				t.Errorf("CheckSanity: %q, want %q", got, tc.want)
			}
		})
	}
}

// TestCheckBadCreates: a refused CreateVolume passes when it has the code
// and names what is wrong, before any call to the cloud; CheckRefused
// fails a wrong code and a message that does not name it.
func TestCheckBadCreates(t *testing.T) {
	cloud := csitest.NewFakeCloud(nil)
	d := csitest.StartLogged(t, loggingCloud{FakeCloud: cloud})
	d.CheckBadCreates(t, func() int { return cloud.Calls("Create") }, []csitest.BadCreate{
		{Name: "type", Parameters: map[string]string{"type": "ssd"}, Want: codes.InvalidArgument, Naming: []string{"type", "ssd"}},
		{Name: "too large", CapacityRange: &csipb.CapacityRange{RequiredBytes: 8 << 30}, Want: codes.OutOfRange, Naming: []string{"capacity_range"}},
	})
	got := failures(t, func(t testing.TB) {
		d.CheckRefused(t, status.Error(codes.OutOfRange, "capacity_range: too large"), codes.InvalidArgument, "capacity_range", "limit_bytes")
	})
	for _, want := range []string{"want InvalidArgument", `does not name "limit_bytes"`} {
		if !strings.Contains(got, want) {
			t.Errorf("CheckRefused of a wrong answer does not say %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, `does not name "capacity_range"`) {
		t.Errorf("CheckRefused: %s", got)
	}
}

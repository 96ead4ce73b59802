package simkit

import (
	"errors"
	"slices"
	"sync"
)

// HypervisorCall is one call a simulator made to its Hypervisor: the
// method's name, the disk and the snapshot it named ("" or zero when the
// method takes none).
type HypervisorCall struct {
	Method   string
	Disk     Disk
	Snapshot string
}

// ErrHypervisor is what a RecordingHypervisor's failing methods return.
var ErrHypervisor = errors.New("the host is on fire")

// RecordingHypervisor is a Hypervisor for simulator tests: it records
// every call, does nothing else, and fails the methods Fail names with
// ErrHypervisor. The zero value is ready to use.
type RecordingHypervisor struct {
	mu    sync.Mutex
	calls []HypervisorCall
	fail  map[string]bool
}

var _ Hypervisor = (*RecordingHypervisor)(nil)

// Fail makes method fail (or, with fail false, succeed again).
func (h *RecordingHypervisor) Fail(method string, fail bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.fail == nil {
		h.fail = map[string]bool{}
	}
	h.fail[method] = fail
}

// Take returns the calls made since the last Take (or Want).
func (h *RecordingHypervisor) Take() []HypervisorCall {
	h.mu.Lock()
	defer h.mu.Unlock()
	c := h.calls
	h.calls = nil
	return c
}

// Want reports an error to t unless the calls made since the last Take
// are want, in order.
func (h *RecordingHypervisor) Want(t interface {
	Helper()
	Errorf(format string, args ...any)
}, what string, want ...HypervisorCall) {
	t.Helper()
	if got := h.Take(); !slices.Equal(got, want) {
		t.Errorf("%s: hypervisor calls\n got %+v\nwant %+v", what, got, want)
	}
}

func (h *RecordingHypervisor) record(method string, d Disk, snapshot string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.calls = append(h.calls, HypervisorCall{method, d, snapshot})
	if h.fail[method] {
		return ErrHypervisor
	}
	return nil
}

// Create records the call.
func (h *RecordingHypervisor) Create(d Disk, snapshot string) error {
	return h.record("Create", d, snapshot)
}

// Attach records the call.
func (h *RecordingHypervisor) Attach(d Disk) error { return h.record("Attach", d, "") }

// Detach records the call.
func (h *RecordingHypervisor) Detach(d Disk) error { return h.record("Detach", d, "") }

// Resize records the call.
func (h *RecordingHypervisor) Resize(d Disk) error { return h.record("Resize", d, "") }

// Snapshot records the call.
func (h *RecordingHypervisor) Snapshot(d Disk, snapshot string) error {
	return h.record("Snapshot", d, snapshot)
}

// DeleteSnapshot records the call.
func (h *RecordingHypervisor) DeleteSnapshot(snapshot string) error {
	return h.record("DeleteSnapshot", Disk{}, snapshot)
}

// Delete records the call.
func (h *RecordingHypervisor) Delete(d Disk) error { return h.record("Delete", d, "") }

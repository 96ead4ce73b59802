package dosim

import (
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// hvCall is one call the simulator made to its Hypervisor.
type hvCall struct {
	Method   string
	Disk     simkit.Disk
	Snapshot string
}

// recorder is a simkit.Hypervisor that records its calls and fails the
// methods named in fail.
type recorder struct {
	mu    sync.Mutex
	calls []hvCall
	fail  map[string]bool
}

var _ simkit.Hypervisor = (*recorder)(nil)

var errHypervisor = errors.New("the host is on fire")

func (h *recorder) record(method string, d simkit.Disk, snapshot string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.calls = append(h.calls, hvCall{method, d, snapshot})
	if h.fail[method] {
		return errHypervisor
	}
	return nil
}

// failing makes method fail (or succeed again).
func (h *recorder) failing(method string, fail bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.fail == nil {
		h.fail = map[string]bool{}
	}
	h.fail[method] = fail
}

// take returns the calls made since the last take.
func (h *recorder) take() []hvCall {
	h.mu.Lock()
	defer h.mu.Unlock()
	c := h.calls
	h.calls = nil
	return c
}

// want fails t unless the calls since the last take are want.
func (h *recorder) want(t *testing.T, what string, want ...hvCall) {
	t.Helper()
	if got := h.take(); !slices.Equal(got, want) {
		t.Errorf("%s: hypervisor calls\n got %+v\nwant %+v", what, got, want)
	}
}

func (h *recorder) Create(d simkit.Disk, snapshot string) error {
	return h.record("Create", d, snapshot)
}
func (h *recorder) Attach(d simkit.Disk) error { return h.record("Attach", d, "") }
func (h *recorder) Detach(d simkit.Disk) error { return h.record("Detach", d, "") }
func (h *recorder) Resize(d simkit.Disk) error { return h.record("Resize", d, "") }
func (h *recorder) Snapshot(d simkit.Disk, snapshot string) error {
	return h.record("Snapshot", d, snapshot)
}
func (h *recorder) DeleteSnapshot(snapshot string) error {
	return h.record("DeleteSnapshot", simkit.Disk{}, snapshot)
}
func (h *recorder) Delete(d simkit.Disk) error { return h.record("Delete", d, "") }

// disk is what the hypervisor is told about a volume.
func disk(id, name string, gib int64, server string) simkit.Disk {
	return simkit.Disk{ID: id, ByIDName: "scsi-0DO_Volume_" + name, SizeBytes: gib << 30, Server: server}
}

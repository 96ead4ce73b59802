package csi

import (
	"sync"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// inflight allows one operation at a time per key (a volume ID, a
// volume or snapshot name): the CSI spec's "operation pending for
// volume", answered Aborted so that the caller retries later rather than
// two calls racing on one volume.
type inflight struct {
	mu   sync.Mutex
	keys map[string]struct{}
}

func newInflight() *inflight { return &inflight{keys: map[string]struct{}{}} }

// acquire takes key, or answers Aborted when another call holds it; the
// caller releases it with the returned function.
func (f *inflight) acquire(kind, key string) (release func(), err error) {
	k := kind + "/" + key
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, busy := f.keys[k]; busy {
		return nil, status.Errorf(codes.Aborted, "an operation on %s %q is already in progress", kind, key)
	}
	f.keys[k] = struct{}{}
	return func() {
		f.mu.Lock()
		delete(f.keys, k)
		f.mu.Unlock()
	}, nil
}

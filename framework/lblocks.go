package framework

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"
)

// serviceLocks serializes the load-balancer pipeline per Service within this
// process: the service controller's node sync and its Service workers can
// act on one Service at the same time. An entry lives only while a caller
// holds or waits for it, so the map holds at most one entry per Service
// being worked on, never one per Service ever seen.
type serviceLocks struct {
	mu sync.Mutex
	m  map[types.UID]*serviceLock
}

type serviceLock struct {
	sync.Mutex
	refs int // holders and waiters; guarded by serviceLocks.mu
}

// lock locks uid's entry and returns the unlock function.
func (s *serviceLocks) lock(uid types.UID) (unlock func()) {
	s.mu.Lock()
	if s.m == nil {
		s.m = map[types.UID]*serviceLock{}
	}
	l := s.m[uid]
	if l == nil {
		l = &serviceLock{}
		s.m[uid] = l
	}
	l.refs++
	s.mu.Unlock()

	l.Lock()
	return func() {
		l.Unlock()
		s.mu.Lock()
		defer s.mu.Unlock()
		if l.refs--; l.refs == 0 {
			delete(s.m, uid)
		}
	}
}

// len is the number of entries, for tests.
func (s *serviceLocks) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.m)
}

package cloudapi

import (
	"maps"
	"net/http"
	"sync"
)

// Counter counts cloud API requests per operation: every attempt that got a
// response from the server, retries included. It is safe for concurrent use;
// the zero value is ready to use and a nil *Counter counts nothing.
type Counter struct {
	mu     sync.Mutex
	byOp   map[string]int64
	total  int64
	writes int64
}

// NewCounter returns an empty Counter.
func NewCounter() *Counter {
	return &Counter{}
}

// add counts one attempt of operation op sent with method.
func (c *Counter) add(method, op string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byOp == nil {
		c.byOp = make(map[string]int64)
	}
	c.byOp[op]++
	c.total++
	if isWrite(method) {
		c.writes++
	}
}

// Get returns the number of requests counted for op.
func (c *Counter) Get(op string) int64 {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.byOp[op]
}

// Snapshot returns a copy of the per-operation counts.
func (c *Counter) Snapshot() map[string]int64 {
	if c == nil {
		return map[string]int64{}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int64, len(c.byOp))
	maps.Copy(out, c.byOp)
	return out
}

// Total returns the number of requests counted.
func (c *Counter) Total() int64 {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.total
}

// Writes returns the number of requests whose method is not GET, HEAD or
// OPTIONS.
func (c *Counter) Writes() int64 {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.writes
}

// Reset forgets every count.
func (c *Counter) Reset() {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.byOp, c.total, c.writes = nil, 0, 0
}

func isWrite(method string) bool {
	switch method {
	case "", http.MethodGet, http.MethodHead, http.MethodOptions:
		return false
	default:
		return true
	}
}

package csidriver

import "time"

// NewWithEnv returns New() reading its environment settings from env
// instead of the process's, for tests.
func NewWithEnv(env map[string]string) *Driver {
	p := New()
	p.lookupEnv = func(k string) (string, bool) {
		v, ok := env[k]
		return v, ok
	}
	return p
}

// PendingOps is how many attaches and detaches p is waiting for.
func (p *Driver) PendingOps() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.ops)
}

// SetClock sets the clock p judges its waits by.
func (p *Driver) SetClock(now func() time.Time) { p.now = now }

// VolumeName is the Brightbox name of the volume a CreateVolume names.
func VolumeName(csiName string) string { return volumeName(csiName) }

// AttachWait is how long an attach or detach p sent is waited for.
const AttachWait = attachWait

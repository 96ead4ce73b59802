package csidriver

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

// RememberedActions is how many volume actions p is following.
func (p *Driver) RememberedActions() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.actions)
}

// VolumeName is the DigitalOcean name of the volume a CreateVolume names.
func VolumeName(csiName string) string { return volumeName(csiName) }

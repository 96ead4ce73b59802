package digitalocean

// NewCSIWithEnv returns NewCSI() reading its environment settings from env
// instead of the process's, for tests.
func NewCSIWithEnv(env map[string]string) *CSI {
	p := NewCSI()
	p.lookupEnv = func(k string) (string, bool) {
		v, ok := env[k]
		return v, ok
	}
	return p
}

// RememberedActions is how many volume actions p is following.
func (p *CSI) RememberedActions() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.actions)
}

// VolumeName is the DigitalOcean name of the volume a CreateVolume names.
func VolumeName(csiName string) string { return volumeName(csiName) }

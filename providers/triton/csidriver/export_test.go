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

// VolumeName is the Triton name of the volume a CreateVolume names.
func VolumeName(csiName string) string { return volumeName(csiName) }

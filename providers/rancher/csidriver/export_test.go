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

// VolumeName is the Cattle name of the volume a CreateVolume names.
func VolumeName(csiName string) string { return volumeName(csiName) }

// ParseVolumeID splits a CSI volume ID into its Cattle volume ID, storage
// driver and volume name.
func ParseVolumeID(id string) (cattleID, driver, name string, ok bool) {
	r, ok := parseVolumeID(id)
	return r.cattleID, r.driver, r.name, ok
}

// MountID is the caller ID the node gives the volume plugin for a target.
func MountID(target string) string { return mountID(target) }

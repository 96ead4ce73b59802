package csidriver

import (
	"testing"

	"github.com/ccmkit/ccmkit/framework/csi"
	"github.com/ccmkit/ccmkit/providers/openstack/internal/cloud"
)

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

// DeviceNames are the by-id names volume id's device may have.
func DeviceNames(id string) []string { return deviceNames(id) }

// SetSysBlock points DevicePath's view of /sys/class/block at dir until
// the test ends.
func SetSysBlock(t testing.TB, dir string) {
	old := sysBlock
	sysBlock = dir
	t.Cleanup(func() { sysBlock = old })
}

// LoadCSICloudConfig reads --cloud-config files as the CSI driver in mode
// does; it returns the [BlockStorage] section and the notes.
func LoadCSICloudConfig(env map[string]string, files []string, mode csi.Mode) (cloud.BlockStorageSection, []string, error) {
	cfg, notes, err := loadCSICloudConfig(func(k string) (string, bool) { v, ok := env[k]; return v, ok }, files, mode)
	return cfg.BlockStorage, notes, err
}

// WithoutRetries makes p try each API request once, so that a test sees
// a fault as it is at once.
func WithoutRetries(p *Driver) *Driver {
	p.cloudAPI.MaxRetries = -1
	return p
}

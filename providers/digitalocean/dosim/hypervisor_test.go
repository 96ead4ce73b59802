package dosim

import (
	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// The simulator's Hypervisor in tests: simkit's recorder.
type (
	hvCall   = simkit.HypervisorCall
	recorder = simkit.RecordingHypervisor
)

// disk is what the hypervisor is told about a volume.
func disk(id, name string, gib int64, server string) simkit.Disk {
	return simkit.Disk{ID: id, ByIDName: "scsi-0DO_Volume_" + name, SizeBytes: gib << 30, Server: server}
}

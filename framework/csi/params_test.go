package csi_test

import (
	"testing"

	"github.com/ccmkit/ccmkit/framework/csi"
)

func TestIsFSTypeParam(t *testing.T) {
	for key, want := range map[string]bool{
		"fstype": true, "FsType": true, "csi.storage.k8s.io/fstype": true,
		"CSI.storage.k8s.io/fstype": false, "fstpye": false, "csi.storage.k8s.io/pvc/name": false,
	} {
		if got := csi.IsFSTypeParam(key); got != want {
			t.Errorf("IsFSTypeParam(%q) = %v, want %v", key, got, want)
		}
	}
}

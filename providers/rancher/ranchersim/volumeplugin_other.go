//go:build !linux

package ranchersim

import "errors"

// errNoBindMounts: the volume plugin's mounts are Linux bind mounts; use
// VolumePluginOptions.NoMount elsewhere.
var errNoBindMounts = errors.New("bind mounts need Linux (set VolumePluginOptions.NoMount)")

func bindMount(string, string) error { return errNoBindMounts }

func unmountDir(string) error { return errNoBindMounts }

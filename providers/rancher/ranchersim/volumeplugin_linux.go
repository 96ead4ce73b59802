package ranchersim

import "syscall"

// bindMount mounts the directory src at target (mount --bind), where
// rancher-nfs mounts the NFS export: a real mount(2), which needs root.
func bindMount(src, target string) error {
	return syscall.Mount(src, target, "", syscall.MS_BIND, "")
}

// unmountDir unmounts target (umount(2)).
func unmountDir(target string) error { return syscall.Unmount(target, 0) }

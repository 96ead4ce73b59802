package main

import "slices"

// toolSet is what one node tools layer of a CSI image holds: commands the
// node plugin runs, the files they read, and, through closure, the shared
// libraries and loader they need, from the locked Debian packages.
type toolSet struct {
	// name says what the layer holds, in its history entry and errors.
	name string
	// tools are commands by file name, looked up in toolDirs as on PATH.
	tools []string
	// files are the other files the tools read, by path.
	files []string
	// links are symbolic links no package ships, path -> target.
	links map[string]string
	// roots are the packages that ship tools and files, which
	// -update-debian-lock resolves the libraries from.
	roots []string
}

// commonTools is the layer every CSI image has: the block volumes' mount,
// mkfs, fsck and resize tools, and /bin/sh for fsck.xfs. Its name is in
// every CSI image's history, so renaming it changes their digests.
// rancher-csi-driver runs only mount and umount of it, and keeps it
// whole: a layer of those alone would still carry libc and libmount, 1.7
// of its 3 MB compressed, and not be the block drivers' layer.
var commonTools = toolSet{
	name:  "node tools",
	tools: nodeTools,
	files: configFiles,
	links: map[string]string{"bin/sh": "dash"},
	roots: debianRoots,
}

// nfsClient is the NFS client user space, for a driver whose volumes are
// NFS exports: the node plugin runs `mount -t nfs -o vers=3,...` (mount
// from commonTools), which runs /sbin/mount.nfs (libmount looks for
// mount.<type> helpers in /sbin, not on PATH; Debian ships it there).
// mount.nfs asks the server's rpcbind for its mountd and nfsd ports over
// libtirpc, which brings the Kerberos GSS-API libraries (loaded though
// sec=sys never calls them), then hands the kernel's NFS client the
// options. An IPv4 server with the default transports needs no more; a
// transport named in the options (proto=tcp, mountproto=udp, as a
// StorageClass's mountOptions may add) or an IPv6 server makes mount.nfs
// map names and netids through /etc/netconfig (libtirpc-common) and
// /etc/protocols (netbase), and fail without them ("Failed to find 'tcp'
// protocol", "RPC Error: Unknown protocol"): a few kilobytes, kept.
//
// Left out, for what the node has to provide: rpc.statd, with its
// start-statd script, and rpcbind. An NFSv3 mount with locking (the
// default, without nolock) needs the node's rpc.statd registered with the
// node's rpcbind: mount.nfs asks rpcbind on 127.0.0.1 for it (the node
// plugin runs in the host's network) and, failing that, would run
// /usr/sbin/start-statd to start one. A statd the container started
// would be the node plugin's orphan, unreaped by a Go PID 1, would lose
// its state, and tell the servers the node had rebooted, whenever the pod
// restarts; and it cannot run at all without an rpcbind on the node. So
// the image has no start-statd, and mount.nfs fails saying "rpc.statd is
// not running but is required for remote locking. Either use '-o nolock'
// to keep locks local, or start statd": the node runs rpcbind and
// rpc.statd (Debian's and Ubuntu's nfs-common, Red Hat's nfs-utils), or
// the StorageClass's mountOptions add nolock. Not needed either:
// umount.nfs (umount unmounts an NFS mount with the umount2 system call
// alone; umount.nfs would first send the server an advisory UMNT, which
// can hang on a server that is gone), mount.nfs4, nfsidmap and rpc.gssd
// (NFSv4, Kerberos), and nfs-common's python tools.
var nfsClient = toolSet{
	name:  "NFS client",
	tools: []string{"mount.nfs"},
	files: []string{"etc/netconfig", "etc/protocols"},
	roots: []string{"nfs-common", "libtirpc-common", "netbase"},
}

// extraTools are the layers a CSI image has above commonTools, by image
// name: those of the drivers that run more than the block tools.
var extraTools = map[string][]toolSet{
	"triton-csi-driver": {nfsClient},
}

// toolSets are every layer's sets, commonTools first.
func toolSets() []toolSet {
	sets := []toolSet{commonTools}
	names := make([]string, 0, len(extraTools))
	for n := range extraTools {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		for _, s := range extraTools[n] {
			if !slices.ContainsFunc(sets, func(o toolSet) bool { return o.name == s.name }) {
				sets = append(sets, s)
			}
		}
	}
	return sets
}

// imageToolSets are the tool sets of image name's layers, in order; none
// for a CCM.
func imageToolSets(name string) []toolSet {
	if !isCSI(name) {
		return nil
	}
	return append([]toolSet{commonTools}, extraTools[name]...)
}

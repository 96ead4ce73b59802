// Package csidriver is the OpenStack Cinder CSI driver: the framework/csi
// provider of Cinder volumes, a drop-in for cloud-provider-openstack's
// cinder-csi-plugin (driver name cinder.csi.openstack.org): its flags, its
// topology key topology.cinder.csi.openstack.org/zone, its publish
// context and device paths, its StorageClass (type, availability) and
// VolumeSnapshotClass (force-create; type snapshot) parameters, and the
// OpenStack CCM's cloud.conf, whose [BlockStorage] section the CCM
// accepts and leaves to it. Volumes attach through Nova's
// os-volume_attachments; attach, detach, expand and delete start the
// operation and never poll (csi.ErrPending while Cinder shows it under
// way). The node plugin finds a device by its virtio serial under
// /dev/disk/by-id, and its server ID and zone in the instance metadata
// (config drive, metadata service); it makes no API call.
//
// A binary is:
//
//	p := csidriver.New()
//	csi.Main(p, p.CommandOptions()...)
//
// It is a package of its own, apart from the cloud-controller-manager
// (package openstack), so that each binary carries only its own job: the
// driver, whose node plugin runs on every node, does not link the CCM
// framework and k8s.io/cloud-provider, and the CCM does not link the CSI
// spec, gRPC and mount code. What both need (cloud.conf and its checks,
// Keystone authentication with rotated credentials, error classification,
// paginated lists) is package internal/cloud.
//
// # Files
//
//	doc.go        this overview
//	driver.go     New, Init and the API rules
//	config.go     Config (environment), cinder-csi-plugin's flags and
//	              reading cloud.conf
//	params.go     the StorageClass and VolumeSnapshotClass parameters
//	              (Parameters, SnapshotParameters)
//	volumes.go    create, get, list, delete and expand volumes (Cinder)
//	attach.go     attach and detach (Nova's os-volume_attachments)
//	snapshots.go  volume snapshots
//	node.go       the instance metadata and device paths
package csidriver

// Package csidriver is the DigitalOcean Block Storage CSI driver: the
// framework/csi provider of DigitalOcean volumes, a drop-in for
// digitalocean/csi-digitalocean (driver name dobs.csi.digitalocean.com,
// topology key "region", publish context, device paths under
// /dev/disk/by-id/scsi-0DO_Volume_<name>, the token Secret and the
// flags). Volumes attach, detach and grow through the API's volume
// actions, which the driver starts and never polls: a call answers
// csi.ErrPending while its action runs and the sidecar's retry reads it.
// The node plugin reads its droplet ID and region from the droplet
// metadata service and makes no API call.
//
// A binary is:
//
//	p := csidriver.New()
//	csi.Main(p, p.CommandOptions()...)
//
// It is a package of its own, apart from the cloud-controller-manager
// (package digitalocean), so that each binary carries only its own job:
// the driver, whose node plugin runs on every node, does not link the CCM
// framework and k8s.io/cloud-provider, and the CCM does not link the CSI
// spec, gRPC and mount code. What both need of the API (the client, the
// not-found rule, paged lists, the region checks and metadata reads) is
// package internal/cloud.
//
// # Files
//
//	doc.go        this overview
//	driver.go     New, Init, the API client and error classification
//	config.go     Config (environment) and csi-digitalocean's flags
//	params.go     the StorageClass parameters (Parameters)
//	volumes.go    create, get, list, delete and expand volumes
//	attach.go     attach and detach, following the volume actions
//	snapshots.go  volume snapshots
//	node.go       the droplet's ID and region, and a volume's device
package csidriver

// Package csidriver is the framework/csi provider of Brightbox's network
// block storage volumes, csi.brightbox.com, the first CSI driver for
// Brightbox: the controller takes the CCM's credentials (Config, the same
// variables) and creates, attaches, detaches, grows and destroys volumes
// without waiting on the API (volumes.go, attach.go); the node plugin
// reads its server ID from the metadata service and finds a volume at
// /dev/disk/by-id/virtio-<serial> (node.go). It reports no topology and
// offers no snapshots, for want of either in gobrightbox v2.2.2 (see
// driver.go and TopologyKey). A binary is:
//
//	p := csidriver.New()
//	csi.Main(p, p.CommandOptions()...)
//
// It is apart from the CCM, package brightbox, so that each binary
// carries only its own job: the driver, whose node plugin runs on every
// node, links none of k8s.io/cloud-provider or the CCM framework, and the
// CCM no CSI code. It shares with the CCM only internal/cloud: the API
// client, its OAuth2 token, and what an authoritative not-found is.
package csidriver

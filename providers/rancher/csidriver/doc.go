// Package csidriver is the Rancher 1.x CSI driver, the framework/csi
// provider of Cattle's volumes, cattle.csi.rancher.com: the volume
// controller the existing CCM's README promised and never had. The
// controller takes the CCM's settings (Config, the same CATTLE_*
// variables) and creates and removes Cattle volumes in the storage driver
// a StorageClass names (rancher-nfs by default), never waiting on Cattle;
// the node plugin, with no credentials, has its host's Docker volume
// plugin of the storage driver create and mount the volume, as Docker
// does for a container, and the framework bind-mounts it. Nothing is
// attached: a volume of a multi-host driver takes ReadWriteMany. A binary
// (cmd/rancher-csi-driver) is:
//
//	p := csidriver.New()
//	csi.Main(p, p.CommandOptions()...)
//
// It is a package of its own, apart from the cloud-controller-manager's
// (providers/rancher), so that each binary carries only its own job: the
// driver, whose node plugin runs on every node, links neither
// k8s.io/cloud-provider nor the CCM framework, and the CCM links no gRPC
// server, CSI spec or mount code. What both need, the Cattle API client,
// is providers/rancher/internal/cloud.
package csidriver

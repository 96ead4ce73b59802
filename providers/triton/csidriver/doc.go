// Package csidriver is the Triton CSI driver: the provider of
// framework/csi for Triton's RFD 26 NFS shared volumes (type tritonnfs),
// DriverName, which cmd/triton-csi-driver serves:
//
//	p := csidriver.New()
//	csi.Main(p, p.CommandOptions()...)
//
// The controller creates and deletes volumes through CloudAPI with the
// CCM's credentials (Config: the same TRITON_* variables, so one Secret
// serves both); the node plugin reads its instance and fabric network from
// the instance metadata and mounts the volumes' NFS exports, with no
// credentials. driver.go says how Triton's volumes map onto CSI.
//
// It is a package of its own, apart from the CCM's (package triton), so
// that each binary carries only its own job: the driver, whose node plugin
// runs on every node, links neither k8s.io/cloud-provider nor the CCM
// framework, and the CCM links neither the CSI spec, gRPC's server nor
// mount-utils. What both need to talk to CloudAPI (the credentials, the
// key and signer, the connection, CloudAPI's errors) is in
// providers/triton/internal/cloud.
package csidriver

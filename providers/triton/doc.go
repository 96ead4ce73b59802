// Package triton is the Joyent / Triton DataCenter provider: Nodes from
// CloudAPI machines, and load balancers for Services of type LoadBalancer,
// either a Triton Moirai appliance (the cloud-load-balancer image) per
// Service or Container Name Service (CNS) names on the nodes, or none on
// an account without CNS (TRITON_LB_MODE none). It talks to CloudAPI
// through triton-go, signing every request with the account's SSH key;
// providers/triton/tritonsim simulates CloudAPI for its tests. The CSI
// driver for Triton's NFS volumes is package csidriver, apart, so that
// each binary carries only its own job; what both share to reach
// CloudAPI is in internal/cloud.
package triton

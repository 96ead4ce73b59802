// Package soak is `make soak` and the e2e suite's short soak: a real
// control plane, a provider's simulated cloud and two CCM replicas under
// leader election go through a seeded random plan of Service, Node and VM
// operations while the cloud injects 5xx, 429s, resets and latency and the
// leader is killed now and then, mid-reconcile included. Once the faults
// stop, the run waits for the cluster to converge and checks the
// invariants a CCM must keep (Check): no Node deleted whose VM exists, one
// cloud load balancer per Service that matches it, nothing leaked.
//
// Plan and Check are pure functions, tested on their own; Run drives a
// cluster (internal/cluster) with them.
package soak

// Command cloudsim serves a provider's simulated cloud API on loopback,
// seeded from a scenario file, so that a cloud-controller-manager can be
// tried by hand, from a script or from a test without a real cloud.
//
//	cloudsim --scenario=examples/cloudsim/skeleton.yaml [--listen=127.0.0.1:0]
//	         [--provider=skeleton] [--print-env-file=path]
//	         [--settle-after=2s] [--dns=127.0.0.53:53]
//
// Once it listens, cloudsim prints on stdout the environment that points
// the provider's cloud-controller-manager at it, one KEY=VALUE a line, the
// provider's variables sorted, then an empty line:
//
//	CLOUDSIM_URL=http://127.0.0.1:38211
//	CLOUDSIM_PROVIDER=skeleton
//	SKELETON_API_URL=http://127.0.0.1:38211
//	SKELETON_TOKEN=skeleton-demo-token
//
// and a line for humans on stderr. --print-env-file writes the same lines to
// a file (mode 0600, created complete: a script may wait for it to appear
// and then source it). cloudsim serves until SIGINT or SIGTERM, then shuts
// down gracefully and exits 0; it exits 1 on any error.
//
// Besides the cloud's API, every simulator serves, without credentials,
// GET /_sim/stats (requests per operation, writes, injected latency) and
// GET /_sim/state (everything the cloud holds). That is why cloudsim only
// listens on loopback addresses.
//
// The simulated cloud moves on with time, as the real one does: a load
// balancer being provisioned, a server being deleted or an action being
// carried out settles --settle-after after it started (default 2s; a
// scenario's settleAfter wins), or sooner, once clients have read it a
// few times (the scenario's provisioningReads). --settle-after=0 leaves
// only the reads, as the simulators' Go tests do.
//
// Endpoints a simulator advertises besides its API (Triton's CMON, on TLS
// with a certificate of its own) are served too, on loopback ports of
// their own; the printed environment and the cloud's catalog name them.
//
// --dns answers DNS queries (A and AAAA, over UDP and TCP) for the names
// the simulated cloud hands out, such as a Brightbox cloud IP's fqdn,
// which Brightbox's cloud-controller-manager resolves before it builds a
// load balancer; any other name is NXDOMAIN. The address is printed as
// CLOUDSIM_DNS. Resolvers take a name server only on port 53, so to point
// a process at it, serve it on a loopback address of its own as root and
// give the process a resolv.conf naming it, in a mount namespace:
//
//	cloudsim --scenario=examples/cloudsim/brightbox.yaml --dns=127.0.0.53:53 &
//	echo 'nameserver 127.0.0.53' > /tmp/cloudsim-resolv.conf
//	unshare --mount sh -c 'mount --bind /tmp/cloudsim-resolv.conf /etc/resolv.conf && exec brightbox-cloud-controller-manager ...'
//
// The scenario's format is the simulator's (for Skeleton Cloud, see
// skeletonsim.Scenario). Its provider field picks the simulator unless
// --provider does; the default is skeleton.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/pflag"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	switch {
	case errors.Is(err, pflag.ErrHelp):
	case err != nil:
		fmt.Fprintf(os.Stderr, "cloudsim: %v\n", err)
		os.Exit(1)
	}
}

// Command cloudsim serves a provider's simulated cloud API on loopback,
// seeded from a scenario file, so that a cloud-controller-manager can be
// tried by hand, from a script or from a test without a real cloud.
//
//	cloudsim --scenario=examples/cloudsim/skeleton.yaml [--listen=127.0.0.1:0]
//	         [--provider=skeleton] [--print-env-file=path]
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

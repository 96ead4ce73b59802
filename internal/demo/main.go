// Command demo is `make demo`: it starts a local control plane (real
// kube-apiserver and etcd from bin/), a simulated cloud and the cloud's real
// CCM binary, registers three nodes, creates a LoadBalancer Service, waits
// for everything to converge and prints what the cluster and the cloud now
// hold. With -keep (KEEP=1) it leaves everything running until Ctrl-C.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/ccmkit/ccmkit/internal/cluster"
)

func main() {
	cloud := flag.String("cloud", "digitalocean", "provider to run")
	keep := flag.Bool("keep", false, "leave the cluster running and print how to use it")
	timeout := flag.Duration("timeout", 3*time.Minute, "how long to wait for convergence")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *cloud, *keep, *timeout); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, cloud string, keep bool, timeout time.Duration) error {
	p, ok := cluster.Lookup(cloud)
	if !ok {
		return fmt.Errorf("unknown cloud %q", cloud)
	}
	step("starting kube-apiserver, etcd and the %s cloud simulator", p.Name)
	c, err := cluster.Start(ctx, cluster.Options{Provider: p})
	if err != nil {
		return err
	}
	defer func() {
		if !keep {
			step("tearing down")
			c.Stop()
			_ = os.RemoveAll(c.WorkDir)
		}
	}()

	step("starting %s-cloud-controller-manager (log: %s/ccm.log)", p.Name, c.WorkDir)
	if _, err := c.StartCCM("ccm"); err != nil {
		return err
	}
	step("registering 3 nodes as kubelets with --cloud-provider=external would")
	for i := range 3 {
		if _, err := c.AddNode(ctx, fmt.Sprintf("demo-node-%d", i), 10*time.Second); err != nil {
			return err
		}
	}
	step("creating Service default/demo-web of type LoadBalancer")
	if err := createService(ctx, c); err != nil {
		return err
	}
	if err := waitForConvergence(ctx, c, timeout); err != nil {
		return err
	}
	if err := printSummary(ctx, os.Stdout, c); err != nil {
		return err
	}
	if keep {
		return keepRunning(ctx, c)
	}
	return nil
}

func step(format string, args ...any) {
	fmt.Printf("==> "+format+"\n", args...)
}

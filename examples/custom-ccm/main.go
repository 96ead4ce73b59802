// Command custom-ccm shows how a platform team builds its own
// cloud-controller-manager from ccmkit: the framework, one provider (here
// the skeleton template), one extra controller and one extra flag.
//
// The extra controller, node-labeler, keeps a label (--node-label) on every
// Node. It is registered with framework.WithControllers, so it runs only on
// the elected leader, appears in /healthz, and --controllers=-node-labeler
// turns it off, like any built-in controller.
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/component-base/cli"

	"github.com/ccmkit/ccmkit/examples/skeleton"
	"github.com/ccmkit/ccmkit/framework"
)

const (
	defaultNodeLabel = "custom-ccm.example.com/managed=true"
	labelerResync    = 10 * time.Minute
)

func main() {
	os.Exit(cli.Run(newCommand()))
}

// newCommand is the skeleton CCM plus node-labeler and its flag.
func newCommand() *cobra.Command {
	nodeLabel := &label{}
	if err := nodeLabel.Set(defaultNodeLabel); err != nil {
		panic(err) // the default is a constant
	}
	fs := pflag.NewFlagSet("custom", pflag.ContinueOnError)
	fs.Var(nodeLabel, "node-label", "Label (key=value) the node-labeler controller keeps on every Node.")

	cmd := framework.NewCommand(skeleton.New(),
		framework.WithFlags("custom", fs),
		framework.WithControllers(framework.Controller{
			Name: "node-labeler",
			Run: func(ctx context.Context, env *framework.Env) error {
				return runLabeler(ctx, env, *nodeLabel)
			},
		}),
		framework.WithDescription("custom-ccm runs the Skeleton Cloud controllers plus node-labeler, which keeps --node-label on every Node."),
		framework.WithCommandName("custom-ccm"),
	)
	return cmd
}

// runLabeler is the node-labeler controller: it uses the CCM's own client
// and shared informers, never second ones.
func runLabeler(ctx context.Context, env *framework.Env, l label) error {
	c, err := newLabeler(env.Client, env.Informers, l, labelerResync)
	if err != nil {
		return err
	}
	// Start the Node informer this controller just asked for: the CCM
	// may not have started its informer factory yet, or may have started
	// it before this informer existed (see framework.Controller).
	env.Informers.Start(ctx.Done())
	if err := c.run(ctx); err != nil {
		return fmt.Errorf("node-labeler: %w", err)
	}
	return nil
}

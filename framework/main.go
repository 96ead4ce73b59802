package framework

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cloud-provider/app"
	cloudcontrollerconfig "k8s.io/cloud-provider/app/config"
	"k8s.io/component-base/cli"
	cliflag "k8s.io/component-base/cli/flag"
	logsapi "k8s.io/component-base/logs/api/v1"
	"k8s.io/component-base/term"
	"k8s.io/klog/v2"

	"github.com/ccmkit/ccmkit/framework/cloudapi"

	utilfeature "k8s.io/apiserver/pkg/util/feature"
	cloudprovider "k8s.io/cloud-provider"

	_ "k8s.io/component-base/logs/json/register"          // --logging-format=json
	_ "k8s.io/component-base/metrics/prometheus/clientgo" // client-go metrics on /metrics
	_ "k8s.io/component-base/metrics/prometheus/version"  // build info on /metrics
)

// Main runs the cloud-controller-manager for p and exits.
func Main(p Provider, opts ...Option) {
	ApplyMemoryDefaults()
	os.Exit(cli.Run(NewCommand(p, opts...)))
}

// MainRegistry runs a multi-cloud "cloud-controller-manager" and exits.
func MainRegistry(r Registry, opts ...Option) {
	ApplyMemoryDefaults()
	os.Exit(cli.Run(r.NewCommand(opts...)))
}

// NewCommand returns the "<name>-cloud-controller-manager" command for p,
// with every standard CCM flag and --cloud-provider defaulting to p's name.
func NewCommand(p Provider, opts ...Option) *cobra.Command {
	return newCommand(p.Name()+"-cloud-controller-manager", p.Name(), Registry{p}, opts)
}

func newCommand(cmdName, defaultProvider string, reg Registry, opts []Option) *cobra.Command {
	s := newSettings(opts)
	if s.name != "" {
		cmdName = s.name
	}
	ccmOptions, err := s.defaultOptions(defaultProvider)
	if err != nil {
		// Only a broken upstream scheme gets here.
		panic(fmt.Sprintf("building default options: %v", err))
	}

	cb := app.NewBuilder()
	cb.SetCmdName(cmdName)
	cb.SetOptions(ccmOptions)
	if s.longDesc != "" {
		cb.SetLongDesc(s.longDesc)
	} else {
		cb.SetLongDesc(fmt.Sprintf("%s runs the Kubernetes cloud controllers (node, node lifecycle, service, route) for %s, built with ccmkit %s.", cmdName, reg.names(), s.version))
	}
	if s.stopCh != nil {
		cb.SetStopChannel(s.stopCh)
	}
	cb.RegisterDefaultControllers()
	for _, rc := range reg.controllers(s.controllers) {
		cb.RegisterController(rc.ctrl.Name, rc.constructor(), nil)
	}
	cb.SetCloudInitializer(s.cloudInitializer(reg))

	logConfig := logsapi.NewLoggingConfiguration()
	logFlags := pflag.NewFlagSet("logging", pflag.ContinueOnError)
	logsapi.AddFlags(logConfig, logFlags)
	s.flags.FlagSet("logging").AddFlagSet(logFlags)
	cb.AddFlags(s.flags)

	cmd := cb.BuildCommand()
	// The builder already defines -v, --vmodule and --log-flush-frequency, so
	// the command kept its own and took the rest (--logging-format=json
	// among them); show only those under "logging".
	s.flags.FlagSets["logging"] = onlyFlagsIn(cmd.Flags(), s.flags.FlagSet("logging"))

	run := cmd.RunE
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if printVersion(cmd, s.version) {
			return nil
		}
		if err := applyLogging(cmd.Flags(), logConfig); err != nil {
			return err
		}
		return run(cmd, args)
	}
	addHelpSections(cmd, s.flags)
	if ms := newMakeSecretCommand(reg, defaultProvider, s.version); ms != nil {
		cmd.CompletionOptions.DisableDefaultCmd = true
		cmd.AddCommand(ms)
	}
	return cmd
}

// cloudInitializer builds the cloud for the chosen --cloud-provider at
// start-up. Bad config or credentials end the process here, before leader
// election, with an error naming the setting.
func (s *settings) cloudInitializer(reg Registry) app.InitCloudFunc {
	return func(c *cloudcontrollerconfig.CompletedConfig) cloudprovider.Interface {
		shared := c.ComponentConfig.KubeCloudShared
		p, err := reg.Lookup(shared.CloudProvider.Name)
		if err == nil {
			var cloud *Cloud
			cloud, err = NewCloud(context.Background(), p, &Env{
				Logger:                klog.Background(),
				Client:                c.Client,
				Informers:             c.SharedInformers,
				Recorder:              c.EventRecorder,
				ClusterName:           shared.ClusterName,
				ClusterCIDR:           shared.ClusterCIDR,
				CloudConfigFile:       shared.CloudProvider.CloudConfigFile,
				InstanceCacheTTL:      s.instanceCacheTTL,
				NodeMonitorPeriod:     c.ComponentConfig.NodeLifecycleController.NodeMonitorPeriod.Duration,
				LoadBalancerCacheTTL:  s.lbCacheTTL,
				LoadBalancerWait:      s.lbWait,
				LoadBalancerFollow:    true,
				InitTimeout:           s.initTimeout,
				InstanceLookupTimeout: s.lookupTimeout,
				Version:               s.version,
				CloudAPI:              s.cloudAPIOptions(),
				NoNodeDeletionGuard:   !s.deletionGuard,
				LeaderElectionLease: types.NamespacedName{Namespace: c.ComponentConfig.Generic.LeaderElection.ResourceNamespace,
					Name: c.ComponentConfig.Generic.LeaderElection.ResourceName},
			})
			if err == nil {
				return cloud
			}
		}
		fmt.Fprintf(os.Stderr, "error: %v\n", err)
		klog.ErrorS(err, "Cannot start the cloud controller manager")
		klog.FlushAndExit(klog.ExitFlushTimeout, 1)
		return nil
	}
}

func (s *settings) cloudAPIOptions() cloudapi.Options {
	return cloudapi.Options{QPS: s.cloudAPIQPS, Burst: s.cloudAPIBurst, MaxRetries: s.cloudAPIMaxRetries, Timeout: s.cloudAPITimeout}
}

// printVersion handles --version and --version=raw with ccmkit's version
// rather than the Kubernetes library version upstream would print.
func printVersion(cmd *cobra.Command, v string) bool {
	f := cmd.Flags().Lookup("version")
	if f == nil {
		return false
	}
	switch f.Value.String() {
	case "true":
		fmt.Fprintf(cmd.OutOrStdout(), "%s %s\n", cmd.Name(), v)
	case "raw":
		fmt.Fprintf(cmd.OutOrStdout(), "%s %s (%s, %s/%s)\n", cmd.Name(), v, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	default:
		return false
	}
	return true
}

// applyLogging applies --logging-format and friends together with the -v and
// --vmodule values the builder's klog flags parsed, and keeps credentials
// out of the log at any -v (see redactLogs).
func applyLogging(fs *pflag.FlagSet, c *logsapi.LoggingConfiguration) error {
	if f := fs.Lookup("v"); f != nil {
		v, err := strconv.ParseUint(f.Value.String(), 10, 32)
		if err != nil {
			return fmt.Errorf("-v: %w", err)
		}
		c.Verbosity = logsapi.VerbosityLevel(v)
	}
	if f := fs.Lookup("vmodule"); f != nil && f.Value.String() != "" {
		if err := logsapi.VModuleConfigurationPflag(&c.VModule).Set(f.Value.String()); err != nil {
			return fmt.Errorf("--vmodule: %w", err)
		}
	}
	if err := logsapi.ValidateAndApply(c, utilfeature.DefaultFeatureGate); err != nil {
		return err
	}
	redactLogs(utilfeature.DefaultFeatureGate.Enabled(logsapi.ContextualLogging))
	return nil
}

// addHelpSections appends ccmkit's and the caller's flag sections to the
// builder's --help, which prints only the upstream ones.
func addHelpSections(cmd *cobra.Command, extra cliflag.NamedFlagSets) {
	help, usage := cmd.HelpFunc(), cmd.UsageFunc()
	cols, _, _ := term.TerminalSize(cmd.OutOrStdout())
	cmd.SetHelpFunc(func(c *cobra.Command, args []string) {
		help(c, args)
		cliflag.PrintSections(c.OutOrStdout(), extra, cols)
	})
	cmd.SetUsageFunc(func(c *cobra.Command) error {
		err := usage(c)
		cliflag.PrintSections(c.OutOrStderr(), extra, cols)
		return err
	})
}

// onlyFlagsIn returns the flags of section that are really on fs (the ones
// the builder did not already define elsewhere).
func onlyFlagsIn(fs *pflag.FlagSet, section *pflag.FlagSet) *pflag.FlagSet {
	out := pflag.NewFlagSet(section.Name(), pflag.ContinueOnError)
	section.VisitAll(func(f *pflag.Flag) {
		if fs.Lookup(f.Name) == f {
			out.AddFlag(f)
		}
	})
	return out
}

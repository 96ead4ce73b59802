package csi

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/component-base/cli"
	cliflag "k8s.io/component-base/cli/flag"
	"k8s.io/component-base/featuregate"
	logsapi "k8s.io/component-base/logs/api/v1"
	"k8s.io/component-base/term"
	"k8s.io/klog/v2"

	_ "k8s.io/component-base/logs/json/register"         // --logging-format=json
	_ "k8s.io/component-base/metrics/prometheus/version" // build info on /metrics
)

// DefaultEndpoint is where the driver serves unless --endpoint says
// otherwise: the socket the shipped manifests share with the sidecars.
const DefaultEndpoint = "unix:///csi/csi.sock"

// Main runs the CSI driver for p and exits:
//
//	func main() { p := csidriver.New(); csi.Main(p, p.CommandOptions()...) }
func Main(p Provider, opts ...Option) {
	os.Exit(cli.Run(NewCommand(p, opts...)))
}

// Option customizes the command Main and NewCommand build.
type Option func(*settings)

type settings struct {
	name, longDesc, version string
	// programArg is the base name of a leading argument the command
	// ignores (WithProgramArg); "" takes no argument.
	programArg string
	flags      cliflag.NamedFlagSets
	serve      Options
	mode       string
	tune       []func(*Options)
}

// WithVersion sets the version --version and GetPluginInfo report,
// overriding the ldflags one.
func WithVersion(v string) Option { return func(s *settings) { s.version = v } }

// WithCommandName names the command; the default is the binary's name.
func WithCommandName(name string) Option { return func(s *settings) { s.name = name } }

// WithProgramArg lets the command take one leading argument whose base
// name is name, and ignore it: the manifests of a driver it replaces may
// pass the program's path as the first argument (cinder-csi-plugin's
// start with /bin/cinder-csi-plugin, for an image without an
// entrypoint), and an image swap should not break on it. Any other
// argument is still an error.
func WithProgramArg(name string) Option { return func(s *settings) { s.programArg = name } }

// WithDescription sets the long description --help prints.
func WithDescription(long string) Option { return func(s *settings) { s.longDesc = long } }

// WithFlags adds a named section of flags to the command (and --help):
// a provider's own settings.
func WithFlags(section string, fs *pflag.FlagSet) Option {
	return func(s *settings) { s.flags.FlagSet(section).AddFlagSet(fs) }
}

// WithServeOptions changes the Options Serve gets after the flags are
// parsed (tests: a Mounter, a Registry).
func WithServeOptions(f func(*Options)) Option {
	return func(s *settings) { s.tune = append(s.tune, f) }
}

// NewCommand returns the driver's command: --endpoint, --mode,
// --metrics-address (/metrics and /healthz), --by-id-dir, --version and
// the logging flags (-v, --vmodule, --logging-format).
func NewCommand(p Provider, opts ...Option) *cobra.Command {
	s := &settings{name: filepath.Base(os.Args[0]), version: Version(), mode: string(ModeAll)}
	for _, o := range opts {
		o(s)
	}
	s.serve = Options{Endpoint: DefaultEndpoint, Provider: p, ByIDDir: DefaultByIDDir}
	fs := s.flags.FlagSet("CSI")
	fs.StringVar(&s.serve.Endpoint, "endpoint", s.serve.Endpoint, "The CSI endpoint: unix:///path/to/csi.sock, or a path.")
	fs.StringVar(&s.mode, "mode", s.mode, "The services to serve: controller (the Deployment beside the sidecars), node (the DaemonSet) or all.")
	fs.StringVar(&s.serve.MetricsAddress, "metrics-address", "", "The address (host:port) to serve /metrics and /healthz on; empty serves neither.")
	fs.StringVar(&s.serve.ByIDDir, "by-id-dir", s.serve.ByIDDir, "The directory of the node's block device links by ID.")
	fs.DurationVar(&s.serve.DeviceWait, "device-wait", DefaultDeviceWait, "How long a node stage or publish waits for an attached volume's device to appear.")
	version := fs.String("version", "false", "Print the version and exit (--version=raw: with the Go version and platform).")
	fs.Lookup("version").NoOptDefVal = "true"

	logConfig := logsapi.NewLoggingConfiguration()
	logsapi.AddFlags(logConfig, s.flags.FlagSet("logging"))

	long := s.longDesc
	if long == "" {
		long = fmt.Sprintf("%s is the CSI driver %s, built with ccmkit %s.", s.name, p.Name(), s.version)
	}
	cmd := &cobra.Command{
		Use:  s.name,
		Long: long,
		Args: s.args,
		RunE: func(cmd *cobra.Command, _ []string) error {
			switch *version {
			case "true":
				fmt.Fprintf(cmd.OutOrStdout(), "%s %s\n", s.name, s.version)
				return nil
			case "raw":
				fmt.Fprintf(cmd.OutOrStdout(), "%s %s (%s, %s/%s)\n", s.name, s.version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
				return nil
			}
			if err := applyLogging(logConfig); err != nil {
				return err
			}
			mode, err := ParseMode(s.mode)
			if err != nil {
				return fmt.Errorf("--mode: %w", err)
			}
			o := s.serve
			o.Mode, o.Version, o.Logger = mode, s.version, klog.Background()
			for _, f := range s.tune {
				f(&o)
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return Serve(ctx, o)
		},
	}
	for _, name := range s.flags.Order {
		cmd.Flags().AddFlagSet(s.flags.FlagSet(name))
	}
	cols, _, _ := term.TerminalSize(cmd.OutOrStdout())
	cliflag.SetUsageAndHelpFunc(cmd, s.flags, cols)
	return cmd
}

// args checks the command's arguments: none, or the program's path
// (WithProgramArg).
func (s *settings) args(cmd *cobra.Command, args []string) error {
	if s.programArg != "" && len(args) == 1 && filepath.Base(args[0]) == s.programArg {
		return nil
	}
	return cobra.NoArgs(cmd, args)
}

func applyLogging(c *logsapi.LoggingConfiguration) error {
	fg := featuregate.NewFeatureGate()
	if err := logsapi.AddFeatureGates(fg); err != nil {
		return err
	}
	return logsapi.ValidateAndApply(c, fg)
}

package framework

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"sigs.k8s.io/yaml"

	"github.com/ccmkit/ccmkit/framework/config"
)

// makeSecretOptions are the flags of the make-secret subcommand.
type makeSecretOptions struct {
	provider    string
	cloudConfig string
	offline     bool
	namespace   string
	name        string
	output      string
	timeout     time.Duration
	version     string
}

// newMakeSecretCommand returns the "make-secret" subcommand for the
// providers of reg that implement SecretMaker, or nil when none does.
func newMakeSecretCommand(reg Registry, defaultProvider, version string) *cobra.Command {
	if !slices.ContainsFunc(reg, func(p Provider) bool { _, ok := p.(SecretMaker); return ok }) {
		return nil
	}
	o := &makeSecretOptions{provider: defaultProvider, output: "yaml", timeout: DefaultInitTimeout, version: version}
	cmd := &cobra.Command{
		Use:   "make-secret",
		Short: "Print the Secret of the cloud's credentials, checked against the cloud",
		Long: "make-secret reads the cloud's credentials as the cloud-controller-manager does (environment variables, " +
			"their _FILE variants, --cloud-config), checks them against the cloud unless --offline, and prints the " +
			"Kubernetes Secret the shipped manifests read to stdout. It never writes a secret to stderr or to the log.",
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			redactLogs(false)
			return o.run(cmd.Context(), reg, cmd.OutOrStdout())
		},
	}
	// Cobra's own help, not the CCM's, which lists the controllers' flags.
	plain := &cobra.Command{}
	cmd.SetHelpFunc(plain.HelpFunc())
	cmd.SetUsageFunc(plain.UsageFunc())
	fs := cmd.Flags()
	fs.StringVar(&o.provider, "cloud-provider", o.provider, "The provider whose Secret to print.")
	fs.StringVar(&o.cloudConfig, "cloud-config", "", "The path of the cloud provider configuration file, as the cloud-controller-manager reads it.")
	fs.BoolVar(&o.offline, "offline", false, "Do not check the credentials against the cloud: make no API call.")
	fs.StringVar(&o.namespace, "namespace", "", "Namespace of the Secret, instead of the one the shipped manifests read.")
	fs.StringVar(&o.name, "name", "", "Name of the Secret, instead of the one the shipped manifests read.")
	fs.StringVarP(&o.output, "output", "o", o.output, "Output format: yaml or json.")
	fs.DurationVar(&o.timeout, "cloud-init-timeout", o.timeout, "Deadline of the check against the cloud; negative means none.")
	addVerbosityFlag(fs)
	return cmd
}

// addVerbosityFlag adds klog's -v to fs, unless it is there already.
func addVerbosityFlag(fs *pflag.FlagSet) {
	if fs.Lookup("v") != nil {
		return
	}
	gofs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(gofs)
	fs.AddGoFlag(gofs.Lookup("v"))
}

func (o *makeSecretOptions) run(ctx context.Context, reg Registry, out io.Writer) error {
	if o.output != "yaml" && o.output != "json" {
		return fmt.Errorf("--output: %q is not yaml or json", o.output)
	}
	p, err := reg.Lookup(o.provider)
	if err != nil {
		return err
	}
	sm, ok := p.(SecretMaker)
	if !ok {
		return fmt.Errorf("the %s provider has no make-secret (it does not implement framework.SecretMaker)", p.Name())
	}
	env := &Env{Logger: klog.Background(), CloudConfigFile: o.cloudConfig, InitTimeout: o.timeout, Version: o.version}
	completeEnv(p, env)
	ctx = klog.NewContext(ctx, env.Logger)

	secret, err := buildSecret(ctx, p, sm.CredentialSecret(), env)
	if err != nil {
		return err
	}
	if o.namespace != "" {
		secret.Namespace = o.namespace
	}
	if o.name != "" {
		secret.Name = o.name
	}
	if o.offline {
		env.Logger.V(1).Info("Not checking the credentials (--offline)")
	} else if err := checkCredentials(ctx, p, env); err != nil {
		return fmt.Errorf("checking the %s credentials against the cloud: %w", p.Name(), err)
	}
	return printSecret(out, secret, o.output)
}

// buildSecret loads p's config as NewCloud does and gathers the Secret's
// data: the tagged fields, the config file, then the provider's hook.
func buildSecret(ctx context.Context, p Provider, spec CredentialSecret, env *Env) (*corev1.Secret, error) {
	// Without the file, the settings it holds are missing too: the error
	// names both.
	var noFile error
	if spec.ConfigFileKey != "" && env.CloudConfigFile == "" {
		noFile = fmt.Errorf("--cloud-config: required: the %s Secret holds the cloud config file under the key %s", p.Name(), spec.ConfigFileKey)
	}
	if err := errors.Join(loadConfig(p, env), noFile); err != nil {
		return nil, err
	}
	data := map[string][]byte{}
	if c, ok := p.(Configurable); ok {
		var err error
		if data, err = config.SecretData(c.Config()); err != nil {
			return nil, fmt.Errorf("%s: %w", p.Name(), err)
		}
	}
	if spec.ConfigFileKey != "" {
		b, err := os.ReadFile(env.CloudConfigFile)
		if err != nil {
			return nil, fmt.Errorf("--cloud-config: %w", err)
		}
		data[spec.ConfigFileKey] = b
	}
	if sc, ok := p.(SecretCompleter); ok {
		if err := sc.CompleteSecret(ctx, data); err != nil {
			return nil, fmt.Errorf("%s: %w", p.Name(), err)
		}
	}
	if len(data) == 0 {
		return nil, fmt.Errorf("%s: no credentials are set, so the Secret would be empty", p.Name())
	}
	keys := make([]string, 0, len(data))
	for k := range data {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	env.Logger.V(2).Info("Secret assembled", "keys", keys) // names only, never values
	ns := spec.Namespace
	if ns == "" {
		ns = metav1.NamespaceSystem
	}
	return &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: spec.Name},
		Type:       corev1.SecretTypeOpaque,
		Data:       data,
	}, nil
}

// checkCredentials runs p's CredentialChecker, or its Init, bounded by
// env.InitTimeout as Init is at start-up.
func checkCredentials(ctx context.Context, p Provider, env *Env) error {
	check := p.Init
	if cc, ok := p.(CredentialChecker); ok {
		check = cc.CheckCredentials
	}
	d := operationDeadline{timeout: env.InitTimeout, fallback: DefaultInitTimeout, flag: "--cloud-init-timeout"}
	checkCtx, cancel := d.start(ctx)
	defer cancel()
	err := check(checkCtx, env)
	if err != nil && ctx.Err() == nil && errors.Is(context.Cause(checkCtx), context.DeadlineExceeded) {
		return fmt.Errorf("%w (%w)", err, context.Cause(checkCtx))
	}
	return err
}

func printSecret(out io.Writer, s *corev1.Secret, format string) error {
	var b []byte
	var err error
	if format == "json" {
		b, err = json.MarshalIndent(s, "", "  ")
		b = append(b, '\n')
	} else {
		b, err = yaml.Marshal(s)
	}
	if err != nil {
		return err // a Secret always marshals; its error would name no value
	}
	_, err = out.Write(b)
	return err
}

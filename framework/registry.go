package framework

import (
	"context"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/cloud-provider/app"
	cloudcontrollerconfig "k8s.io/cloud-provider/app/config"
	genericcontrollermanager "k8s.io/controller-manager/app"
	"k8s.io/controller-manager/controller"

	cloudprovider "k8s.io/cloud-provider"
)

// Registry holds several providers for one binary; --cloud-provider picks
// one. It is a plain value: nothing registers itself in init().
//
//	framework.MainRegistry(framework.Registry{skeleton.New(), other.New()})
type Registry []Provider

// NewCommand returns the "cloud-controller-manager" command for r; the first
// provider is the --cloud-provider default.
func (r Registry) NewCommand(opts ...Option) *cobra.Command {
	def := ""
	if len(r) > 0 {
		def = r[0].Name()
	}
	return newCommand("cloud-controller-manager", def, r, opts)
}

// Lookup returns the provider called name.
func (r Registry) Lookup(name string) (Provider, error) {
	for _, p := range r {
		if p.Name() == name {
			return p, nil
		}
	}
	return nil, fmt.Errorf("--cloud-provider=%q is not one of this binary's providers (%s)", name, r.names())
}

// RegisterUpstream also registers every provider with the upstream
// cloudprovider registry, for code that initializes clouds by name (such as
// k8s.io/cloud-provider/app/testing). Config comes from the environment and
// the file the upstream registry passes.
func (r Registry) RegisterUpstream() {
	for _, p := range r {
		p := p
		cloudprovider.RegisterCloudProvider(p.Name(), func(cfg io.Reader) (cloudprovider.Interface, error) {
			env := &Env{}
			if cfg != nil {
				path, cleanup, err := spoolConfig(cfg)
				if err != nil {
					return nil, err
				}
				defer cleanup()
				env.CloudConfigFile = path
			}
			return NewCloud(context.Background(), p, env) //nolint:forbidigo // the upstream factory has no context
		})
	}
}

func (r Registry) names() string {
	names := make([]string, 0, len(r))
	for _, p := range r {
		names = append(names, p.Name())
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// registeredController is an extra controller and the provider it belongs to
// ("" for controllers given with WithControllers, which run for any).
type registeredController struct {
	owner string
	ctrl  Controller
}

func (r Registry) controllers(common []Controller) []registeredController {
	var out []registeredController
	for _, c := range common {
		out = append(out, registeredController{ctrl: c})
	}
	for _, p := range r {
		if cp, ok := p.(ControllersProvider); ok {
			for _, c := range cp.Controllers() {
				out = append(out, registeredController{owner: p.Name(), ctrl: c})
			}
		}
	}
	return out
}

// constructor adapts a Controller to the upstream builder, which gives it
// --controllers and leader election, and mounts the supervisor's health
// check on /healthz.
func (rc registeredController) constructor() app.ControllerInitFuncConstructor {
	return app.ControllerInitFuncConstructor{
		InitContext: app.ControllerInitContext{ClientName: rc.ctrl.Name},
		Constructor: func(_ app.ControllerInitContext, _ *cloudcontrollerconfig.CompletedConfig, cp cloudprovider.Interface) app.InitFunc {
			return func(ctx context.Context, _ genericcontrollermanager.ControllerContext) (controller.Interface, bool, error) {
				cloud, ok := cp.(*Cloud)
				if !ok || (rc.owner != "" && rc.owner != cloud.ProviderName()) {
					return nil, false, nil
				}
				s := &supervisor{ctrl: rc.ctrl}
				go s.run(ctx, cloud.Env())
				return s, true, nil
			}
		},
	}
}

// spoolConfig copies an upstream config reader to a temp file, because
// providers read --cloud-config by path.
func spoolConfig(r io.Reader) (path string, cleanup func(), err error) {
	f, err := os.CreateTemp("", "ccmkit-cloud-config-*")
	if err != nil {
		return "", nil, err
	}
	cleanup = func() { _ = os.Remove(f.Name()) }
	_, err = io.Copy(f, r)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		cleanup()
		return "", nil, err
	}
	return f.Name(), cleanup, nil
}

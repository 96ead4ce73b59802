package csidriver

import (
	"context"
	"crypto/tls"
	"fmt"
	"slices"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"k8s.io/klog/v2"

	"github.com/ccmkit/ccmkit/framework/cloudapi"
	"github.com/ccmkit/ccmkit/framework/csi"
	"github.com/ccmkit/ccmkit/providers/triton/internal/cloud"
)

// This file is the Triton provider of framework/csi, the first CSI driver
// for Triton: its RFD 26 shared volumes (type tritonnfs), each an NFS
// server in a storage zone of its own on the account's fabric networks,
// over triton-go v1.8.5's compute.Volumes() (the version the CCM uses):
//
//   - a volume is a shared filesystem (csi.SharedFilesystem): nothing is
//     attached, every node that publishes it mounts its NFS export,
//     filesystem_path ("<ip>:/zones/<uuid>/data"), and it takes the
//     multi-node access modes (ReadWriteMany);
//   - CreateVolume sends the create and answers csi.ErrPending (Aborted)
//     until the volume is ready, since the node, which has no
//     credentials, mounts what the volume_context says and
//     filesystem_path is not known before; a failed volume is deleted
//     and reported, so that the retry creates another;
//   - DeleteVolume sends the delete and never waits; a volume a machine
//     still uses (CloudAPI's VolumeInUse) is csi.ErrInUse;
//   - topology is the fabric network (TopologyKey), as an NFS volume
//     is reachable on its networks only;
//   - sizes are the datacenter's (ListVolumeSizes, read at start-up): 10
//     to 100 GiB by 10 and 200 to 1000 GiB by 100 on a stock Triton, a
//     size between two of them rounded up to the next (Create);
//   - no snapshots, clones or expansion: CloudAPI has none for volumes
//     (RFD 26's snapshots milestone was never served; "Volume containers
//     will not be resizable in place").

const (
	mib = int64(1) << 20
	gib = int64(1) << 30
)

// Driver is the Triton provider of framework/csi. The zero value is not
// usable: New makes one.
type Driver struct {
	// lookupEnv reads the environment; nil is the process's (tests set it).
	lookupEnv func(string) (string, bool)

	cfg Config
	// api is the CloudAPI client (controller), nil without credentials.
	api *cloud.Client
	// sizes are the volume sizes the datacenter takes, in MiB, ascending
	// (ListVolumeSizes; RFD 26's on a node plugin, which creates none).
	sizes []int64
	// node is this instance, from the instance metadata (node plugin).
	node csi.NodeInfo
	// noAPI is why controller calls cannot be served: no credentials (""
	// when they can).
	noAPI string
}

var (
	_ csi.Provider           = (*Driver)(nil)
	_ csi.SharedFilesystem   = (*Driver)(nil)
	_ csi.Initializer        = (*Driver)(nil)
	_ csi.Lister             = (*Driver)(nil)
	_ csi.ParameterValidator = (*Driver)(nil)
)

// New returns the Triton CSI provider, configured when the driver
// starts (Init) from the environment (see Config):
//
//	p := csidriver.New()
//	csi.Main(p, p.CommandOptions()...)
func New() *Driver {
	return &Driver{cfg: Config{MdataGet: DefaultMdataGet}, sizes: slices.Clone(rfd26Sizes)}
}

// CommandOptions are the csi.Main options of the driver binary: its
// description. It takes the framework's flags only; the rest is the
// environment.
func (p *Driver) CommandOptions() []csi.Option {
	return []csi.Option{
		csi.WithDescription("triton-csi-driver is the CSI driver for Triton's NFS shared volumes (RFD 26, type tritonnfs; " + DriverName +
			"), ReadWriteMany. The controller takes the Triton CCM's credentials (TRITON_URL, TRITON_ACCOUNT, TRITON_KEY_ID, " +
			"TRITON_KEY_MATERIAL or TRITON_KEY_MATERIAL_FILE, or their SDC_* names); the node plugin reads its instance UUID and " +
			"fabric network from the instance metadata (TRITON_MDATA_GET, default mdata-get) and mounts the volumes over NFS."),
	}
}

// Name is the driver name, DriverName.
func (p *Driver) Name() string { return DriverName }

// TopologyKey is TopologyKey: a volume's segment is its fabric network.
func (p *Driver) TopologyKey() string { return TopologyKey }

// Limits are the datacenter's volume sizes (ListVolumeSizes, read by
// Init): its smallest (also the size of a volume asked for with none) to
// its largest, in steps of their greatest common divisor (10 GiB on a
// stock Triton, whose sizes are 10 to 100 GiB by 10, then 200 to 1000 GiB
// by 100; Create rounds a size between two to the next). No limit per
// node: nothing is attached.
func (p *Driver) Limits() csi.Limits {
	sizes := p.sizes
	if len(sizes) == 0 {
		sizes = rfd26Sizes
	}
	step := sizes[0]
	for _, s := range sizes[1:] {
		step = gcd(step, s)
	}
	return csi.Limits{MinBytes: sizes[0] * mib, StepBytes: step * mib, MaxBytes: sizes[len(sizes)-1] * mib, DefaultBytes: sizes[0] * mib}
}

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// Init reads the configuration; a node plugin reads its instance UUID and
// NICs from the instance metadata, a controller connects to CloudAPI with
// the credentials and reads the datacenter's volume sizes, failing with
// an error that names the setting at fault. A process serving both
// without credentials serves the node side and answers controller calls
// FailedPrecondition. No error, and no log line, holds the key.
func (p *Driver) Init(ctx context.Context, env *csi.Env) error {
	cfg, err := loadConfig(p.lookupEnv)
	if err != nil {
		return err
	}
	p.cfg = cfg
	ctx = klog.NewContext(ctx, env.Logger)
	if env.Mode != csi.ModeController {
		if p.node, err = readNodeMetadata(ctx, cfg.MdataGet); err != nil {
			return err
		}
		if p.node.Segment == "" {
			env.Logger.Info("This instance has no fabric NIC: no Triton NFS volume is reachable from it", "instance", p.node.ID)
		}
		env.Logger.Info("Triton CSI node initialized", "instance", p.node.ID, "network", p.node.Segment)
	}
	if env.Mode == csi.ModeNode {
		return nil
	}
	if !cfg.hasCredentials() && env.Mode != csi.ModeController {
		p.noAPI = "no Triton credentials (TRITON_KEY_MATERIAL): this process serves the node side only"
		env.Logger.Info("No Triton credentials: serving the node side only; controller calls fail")
		return nil
	}
	if err := cfg.checkCredentials(); err != nil {
		return err
	}
	return p.initController(ctx, env)
}

// initController connects to CloudAPI, as the CCM does, and reads the
// datacenter's volume sizes.
func (p *Driver) initController(ctx context.Context, env *csi.Env) error {
	cr := p.cfg.credentials()
	o := cloudapi.Options{Provider: cloud.Name, Version: env.Version}
	if p.cfg.SkipTLSVerify {
		o.TLS = &tls.Config{InsecureSkipVerify: true} //nolint:gosec // the operator asked, with TRITON_SKIP_TLS_VERIFY
	}
	a, err := cloud.Connect(ctx, &cr, cloudapi.NewClient(o))
	if err != nil {
		return err
	}
	sizes, err := readVolumeSizes(ctx, a)
	if err != nil {
		return err
	}
	p.api, p.sizes = a, sizes
	env.Logger.Info("Triton CSI controller initialized", "url", cloudapi.RedactURL(a.URL()), "account", a.Login,
		"user", cr.User, "datacenter", a.Datacenter, "volumeSizesMiB", sizes)
	return nil
}

// controller returns the CloudAPI client, or FailedPrecondition in a
// process without credentials.
func (p *Driver) controller() (*cloud.Client, error) {
	if p.api == nil {
		msg := p.noAPI
		if msg == "" {
			msg = "the CloudAPI client is not initialized"
		}
		return nil, status.Error(codes.FailedPrecondition, msg)
	}
	return p.api, nil
}

// isVolumeID reports whether id has the shape of a volume's ID, a UUID
// (CloudAPI answers any other 409 InvalidArgument): any other names
// nothing, and must not reach a URL path (triton-go joins it into one).
func isVolumeID(id string) bool { return cloud.IsUUID(id) }

// noSuchVolume is csi.ErrNotFound for an ID no volume can have.
func noSuchVolume(id string) error {
	return fmt.Errorf("%q is not a Triton volume ID (a UUID): %w", truncateText(id, 80), csi.ErrNotFound)
}

// truncateText cuts s to n bytes, for errors that quote input.
func truncateText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// apiCode is the CloudAPI error code of err's answer, "" for an error
// without one.
func apiCode(err error) string {
	if e := cloud.APIError(err); e != nil {
		return e.Code
	}
	return ""
}

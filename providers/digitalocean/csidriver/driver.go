package csidriver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/digitalocean/godo"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"k8s.io/klog/v2"

	"github.com/ccmkit/ccmkit/framework/cloudapi"
	"github.com/ccmkit/ccmkit/framework/csi"
	"github.com/ccmkit/ccmkit/providers/digitalocean/internal/cloud"
)

// This file is the DigitalOcean block storage provider of framework/csi:
// a drop-in for csi-digitalocean v4.16.0 (driver name, topology key,
// publish context, device path, sizes, attach limit, the token Secret and
// its flags). Unlike csi-digitalocean it never polls an action: attach,
// detach and resize start the action and answer csi.ErrPending while it
// runs (the framework answers Aborted and the sidecar retries); the retry
// finds the volume attached, detached or grown, or reads the action it
// started.

const (
	giB = int64(1) << 30
	tiB = int64(1) << 40

	// createdByDO is the description csi-digitalocean gives the volumes
	// and snapshots it creates; a volume restored from a snapshot gets
	// the snapshot's ID after it (createdFromSnapshot), since the API
	// keeps no other record of a volume's source.
	createdByDO         = "Created by DigitalOcean CSI driver"
	createdFromSnapshot = createdByDO + " from snapshot "
)

// Driver is the DigitalOcean provider of framework/csi. The zero value is
// not usable: New makes one.
type Driver struct {
	flags *flags
	// lookupEnv reads the environment; nil is the process's (tests set it).
	lookupEnv func(string) (string, bool)

	cfg    Config
	name   string
	client *godo.Client
	// region is where the controller creates and lists volumes.
	region string
	// node is this droplet, from the metadata service (node plugin).
	node csi.NodeInfo
	// noAPI is why controller calls cannot be served: no token ("" when
	// they can).
	noAPI string

	mu sync.Mutex
	// actions are the volume actions this controller started and has not
	// seen finish, by volume ID: the retry of an Attach, Detach or Expand
	// reads its action instead of starting another.
	actions map[string]volumeAction
}

var (
	_ csi.Provider           = (*Driver)(nil)
	_ csi.Attacher           = (*Driver)(nil)
	_ csi.Initializer        = (*Driver)(nil)
	_ csi.Expander           = (*Driver)(nil)
	_ csi.Snapshotter        = (*Driver)(nil)
	_ csi.Lister             = (*Driver)(nil)
	_ csi.ParameterValidator = (*Driver)(nil)
)

// New returns the DigitalOcean CSI provider, configured when the driver
// starts (Init) from the environment and from csi-digitalocean's flags
// (see CommandOptions):
//
//	p := csidriver.New()
//	csi.Main(p, p.CommandOptions()...)
func New() *Driver {
	return &Driver{flags: newFlags(), actions: map[string]volumeAction{}, cfg: Config{VolumeLimit: DefaultVolumeLimit}}
}

// CommandOptions are the csi.Main options of the driver binary:
// csi-digitalocean's flags and a description.
func (p *Driver) CommandOptions() []csi.Option {
	return []csi.Option{
		csi.WithFlags("DigitalOcean", p.flags.fs),
		csi.WithDescription("digitalocean-csi-driver is the CSI driver for DigitalOcean Block Storage (" + DriverName +
			"), a drop-in for csi-digitalocean: the same driver name, topology, publish context, device paths, token Secret and flags."),
		csi.WithServeOptions(func(o *csi.Options) {
			if o.MetricsAddress == "" {
				o.MetricsAddress = p.flags.debugAddr
			}
		}),
	}
}

// Name is the driver name: dobs.csi.digitalocean.com unless --driver-name
// says otherwise.
func (p *Driver) Name() string {
	if p.name != "" {
		return p.name
	}
	if p.flags != nil && p.flags.driverName != "" {
		return p.flags.driverName
	}
	return DriverName
}

// TopologyKey is csi-digitalocean's: "region".
func (p *Driver) TopologyKey() string { return TopologyKey }

// Limits are csi-digitalocean's: 1 GiB to 16 TiB in GiB steps, 16 GiB when
// no size is asked for, and the configured volumes per node.
func (p *Driver) Limits() csi.Limits {
	return csi.Limits{MinBytes: giB, StepBytes: giB, MaxBytes: 16 * tiB, DefaultBytes: 16 * giB, MaxPerNode: int64(p.cfg.VolumeLimit)}
}

// Init reads the configuration; a node plugin reads its droplet ID and
// region from the metadata service, a controller builds its API client,
// checks the token and settles its region. A process serving both
// without a token (csi-digitalocean's node DaemonSet passes none) serves
// the node side and answers controller calls FailedPrecondition. No
// error holds the token.
func (p *Driver) Init(ctx context.Context, env *csi.Env) error {
	cfg, err := loadConfig(p.lookupEnv, p.flags)
	if err != nil {
		return err
	}
	p.cfg, p.name = cfg, p.Name()
	// The API requests Init makes log (redacted) through the driver's
	// logger, as the calls' requests do.
	ctx = klog.NewContext(ctx, env.Logger)
	if env.Mode != csi.ModeController {
		if p.node, err = readNodeMetadata(ctx, cfg.MetadataURL); err != nil {
			return err
		}
	}
	if env.Mode == csi.ModeNode {
		return nil
	}
	token, err := cfg.Token.Reveal()
	if err != nil {
		return fmt.Errorf("DIGITALOCEAN_ACCESS_TOKEN_FILE: %w", err)
	}
	if token == "" {
		if env.Mode == csi.ModeController {
			return errors.New("DIGITALOCEAN_ACCESS_TOKEN: required by the controller (set DIGITALOCEAN_ACCESS_TOKEN, DIGITALOCEAN_ACCESS_TOKEN_FILE or --token)")
		}
		p.noAPI = "no DigitalOcean API token (DIGITALOCEAN_ACCESS_TOKEN): this process serves the node side only"
		env.Logger.Info("No DigitalOcean API token: serving the node side only; controller calls fail")
		return nil
	}
	return p.initController(ctx, env)
}

func (p *Driver) initController(ctx context.Context, env *csi.Env) error {
	hc := cloudapi.NewClient(cloudapi.Options{Provider: cloud.ProviderName, Version: env.Version, QPS: p.cfg.APIQPS})
	// The token is revealed per request, so a rotated
	// DIGITALOCEAN_ACCESS_TOKEN_FILE applies at once, and is sent only to
	// the API's own host.
	c, err := cloud.NewClient(hc, p.cfg.APIURL, "DIGITALOCEAN_API_URL", p.cfg.Token.Reveal)
	if err != nil {
		return err
	}
	if err := cloud.CheckAccess(ctx, c); err != nil {
		switch cloud.StatusOf(err) {
		case http.StatusUnauthorized, http.StatusForbidden:
			return fmt.Errorf("the DigitalOcean API rejected the token (check DIGITALOCEAN_ACCESS_TOKEN or DIGITALOCEAN_ACCESS_TOKEN_FILE): %w", err)
		}
		return fmt.Errorf("cannot use the DigitalOcean API at %s (DIGITALOCEAN_API_URL): %w", cloudapi.RedactURL(c.BaseURL), err)
	}
	switch {
	case p.cfg.Region != "":
		if err := cloud.CheckRegion(ctx, c, p.cfg.Region); err != nil {
			return err
		}
		p.region = p.cfg.Region
	case p.node.Segment != "":
		p.region = p.node.Segment
	default:
		if p.region, err = cloud.RegionFromMetadata(ctx, p.cfg.MetadataURL+metadataRegionPath); err != nil {
			return fmt.Errorf("REGION is not set and the region is not known from the droplet metadata service (set REGION or --region): %w", err)
		}
	}
	p.client = c
	env.Logger.Info("DigitalOcean CSI controller initialized", "apiURL", cloudapi.RedactURL(c.BaseURL), "region", p.region, "tag", p.cfg.Tag)
	return nil
}

// api returns the API client, or FailedPrecondition in a process without
// a token.
func (p *Driver) api() (*godo.Client, error) {
	if p.client == nil {
		msg := p.noAPI
		if msg == "" {
			msg = "the DigitalOcean API client is not initialized"
		}
		return nil, status.Error(codes.FailedPrecondition, msg)
	}
	return p.client, nil
}

// pathID escapes an ID from a CSI request for a URL path: the API's IDs
// (UUIDs) never change, anything else cannot leave its path segment.
func pathID(id string) string { return url.PathEscape(id) }

// apiMessage is the message of an API error answer, "" for other errors.
func apiMessage(err error) string {
	var e *godo.ErrorResponse
	if errors.As(err, &e) {
		return e.Message
	}
	return ""
}

// has reports whether err is an API answer with status code (0: any)
// whose message contains text (case-insensitively).
func has(err error, code int, text string) bool {
	return (code == 0 || cloud.StatusOf(err) == code) && strings.Contains(strings.ToLower(apiMessage(err)), strings.ToLower(text))
}

// The API's messages the driver acts on (csi-digitalocean matches the
// same ones).
const (
	msgPendingEvent    = "pending event"           // "Droplet already has a pending event."
	msgAlreadyAttached = "already attached"        // "This volume is already attached"
	msgNoAttachment    = "attachment not found"    // "Attachment not found"
	msgAttachLimit     = "cannot attach more"      // "cannot attach more volumes to the Droplet", "... than 7 volumes ..."
	msgCapacityLimit   = "capacity limit exceeded" // 403 on create: the account's volume limit
	msgOnlyUpwards     = "only be resized upwards" //nolint:gosec // an API message ("Volumes may only be resized upwards"), not a credential
	msgAttachedDelete  = "attached to a droplet"   // "A volume that's attached to a Droplet cannot be deleted..."
)

// wrapAPI adds what was asked to an API error, keeping it (and the
// not-found decision) for errors.Is and cloud.StatusOf.
func wrapAPI(err error, format string, args ...any) error {
	return fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), err)
}

// notFoundError is a 404 the API answered for the one resource a request
// named: csi.ErrNotFound, with the API's error kept.
type notFoundError struct {
	what string
	kind error // csi.ErrNotFound, csi.ErrNodeNotFound
	err  error
}

func (e *notFoundError) Error() string   { return e.what + ": " + e.kind.Error() }
func (e *notFoundError) Unwrap() []error { return []error{e.kind, e.err} }

// orNotFound is csi.ErrNotFound when the API said what is not there, err
// otherwise.
func orNotFound(err error, format string, args ...any) error {
	what := fmt.Sprintf(format, args...)
	if cloud.IsNotFound(err) {
		return &notFoundError{what: what, kind: csi.ErrNotFound, err: err}
	}
	return wrapAPI(err, "%s", what)
}

package csidriver

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	brightbox "github.com/brightbox/gobrightbox/v2"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"k8s.io/klog/v2"

	"github.com/ccmkit/ccmkit/framework/cloudapi"
	"github.com/ccmkit/ccmkit/framework/csi"
	"github.com/ccmkit/ccmkit/providers/brightbox/internal/cloud"
)

// This file is the Brightbox block storage provider of framework/csi, the
// first CSI driver for Brightbox Cloud's network volumes, over
// gobrightbox v2.2.2 (the version the CCM uses):
//
//   - volumes are created with the size asked for, in whole GiB from 40
//     GiB to 4 TiB (the API's sizes are MiB; see Limits), named as the CSI
//     name and described as the driver's, encrypted when the
//     StorageClass asks; not pre-formatted (see Create);
//   - attach, detach and delete never wait: the driver sends the request
//     and answers csi.ErrPending until the volume shows it done (the
//     framework answers Aborted and the sidecar retries); a resize is
//     done when the API answers it;
//   - the node finds an attached volume at /dev/disk/by-id/virtio-<serial>
//     (DevicePath), its server ID from the metadata service;
//   - no snapshots. Brightbox's API has no volume snapshot: a snapshot is
//     of a server, and makes an Image. gobrightbox v2.2.2 can make an
//     Image from a volume (ImageOptions.Volume) and a volume from an
//     Image, but that path is undocumented (neither Brightbox's docs nor
//     its CLI, Terraform provider or fog-brightbox use it), its
//     consistency with the volume attached and its size rules are not
//     known, and an Image is an account-wide machine image, not a
//     volume's point-in-time copy. A CSI snapshot promises the latter,
//     so the driver offers none rather than pass images off as volume
//     snapshots. Volume copies (POST /1.0/volumes/{id}/copy, in
//     fog-brightbox) are not in gobrightbox v2.2.2 either, so no clones.

const (
	mib = int64(1) << 20
	gib = int64(1) << 30
	tib = int64(1) << 40

	// volumeDescription marks the volumes the driver creates.
	volumeDescription = "Created by the Brightbox CSI driver"
	// attachWait is how long an attach or detach this controller sent and
	// has not yet seen done is waited for (the retry does not send it
	// again, and a detach waits for an attach): long enough for the API
	// to carry it out, bounded so that one the cloud dropped is sent
	// again.
	attachWait = 2 * time.Minute
)

// Driver is the Brightbox provider of framework/csi. The zero value is not
// usable: New makes one.
type Driver struct {
	// lookupEnv reads the environment; nil is the process's (tests set it).
	lookupEnv func(string) (string, bool)

	cfg    Config
	client *brightbox.Client
	// node is this server, from the metadata service (node plugin).
	node csi.NodeInfo
	// noAPI is why controller calls cannot be served: no credentials (""
	// when they can).
	noAPI string

	mu sync.Mutex
	// ops are the attaches and detaches this controller sent and has not
	// seen done, by volume ID (see volumeOp).
	ops map[string]volumeOp
	now func() time.Time
}

var (
	_ csi.Provider           = (*Driver)(nil)
	_ csi.Attacher           = (*Driver)(nil)
	_ csi.Initializer        = (*Driver)(nil)
	_ csi.Expander           = (*Driver)(nil)
	_ csi.Lister             = (*Driver)(nil)
	_ csi.ParameterValidator = (*Driver)(nil)
)

// New returns the Brightbox CSI provider, configured when the driver
// starts (Init) from the environment (see Config):
//
//	p := csidriver.New()
//	csi.Main(p, p.CommandOptions()...)
func New() *Driver {
	return &Driver{cfg: Config{VolumeLimit: DefaultVolumeLimit}, ops: map[string]volumeOp{}, now: time.Now}
}

// CommandOptions are the csi.Main options of the driver binary: its
// description. It takes the framework's flags only; the rest is the
// environment.
func (p *Driver) CommandOptions() []csi.Option {
	return []csi.Option{
		csi.WithDescription("brightbox-csi-driver is the CSI driver for Brightbox Cloud block storage volumes (" + DriverName +
			"). The controller takes the Brightbox CCM's credentials (BRIGHTBOX_CLIENT and BRIGHTBOX_CLIENT_SECRET, or " +
			"BRIGHTBOX_USER_NAME and BRIGHTBOX_PASSWORD; BRIGHTBOX_ACCOUNT, BRIGHTBOX_API_URL); the node plugin reads its " +
			"server ID from the metadata service (BRIGHTBOX_METADATA_URL) and reports BRIGHTBOX_VOLUME_LIMIT volumes per node."),
	}
}

// Name is the driver name, DriverName.
func (p *Driver) Name() string { return DriverName }

// TopologyKey is the package's TopologyKey: none (see its doc comment).
func (p *Driver) TopologyKey() string { return TopologyKey }

// Limits are Brightbox's: 40 GiB ("Volumes must be a minimum of 40GB",
// the API's 40960 MiB, and the size of a volume asked for with none) to
// 4 TiB ("maximum of 4TB") in GiB steps (the API takes MiB; whole GiB
// are what Brightbox's own clients ask for), and the configured volumes
// per node.
func (p *Driver) Limits() csi.Limits {
	return csi.Limits{MinBytes: 40 * gib, StepBytes: gib, MaxBytes: 4 * tib, DefaultBytes: 40 * gib,
		MaxPerNode: int64(p.cfg.VolumeLimit)}
}

// Init reads the configuration; a node plugin reads its server ID from
// the metadata service, a controller connects to the API with the
// credentials (a token, and the account), failing with an error that
// names the setting at fault. A process serving both without credentials
// serves the node side and answers controller calls FailedPrecondition.
// No error, and no log line, holds a credential.
func (p *Driver) Init(ctx context.Context, env *csi.Env) error {
	cfg, err := loadConfig(p.lookupEnv)
	if err != nil {
		return err
	}
	p.cfg = cfg
	ctx = klog.NewContext(ctx, env.Logger)
	if env.Mode != csi.ModeController {
		if p.node, err = readNodeMetadata(ctx, cfg.MetadataURL); err != nil {
			return err
		}
	}
	if env.Mode == csi.ModeNode {
		return nil
	}
	if !cfg.hasCredentials() {
		const set = "set BRIGHTBOX_CLIENT and BRIGHTBOX_CLIENT_SECRET (an API client), or BRIGHTBOX_USER_NAME and BRIGHTBOX_PASSWORD"
		if env.Mode == csi.ModeController {
			return errors.New("BRIGHTBOX_CLIENT: the controller needs credentials: " + set)
		}
		p.noAPI = "no Brightbox credentials (BRIGHTBOX_CLIENT): this process serves the node side only"
		env.Logger.Info("No Brightbox credentials: serving the node side only; controller calls fail")
		return nil
	}
	cr := cfg.credentials()
	if err := cr.Validate(); err != nil {
		return err
	}
	hc := cloudapi.NewClient(cloudapi.Options{Provider: cloud.ProviderName, Version: env.Version})
	c, err := cloud.Connect(ctx, &cr, hc)
	if err != nil {
		return err
	}
	p.client = c
	env.Logger.Info("Brightbox CSI controller initialized", "apiURL", cloudapi.RedactURL(c.ResourceBaseURL()))
	return nil
}

// api returns the API client, or FailedPrecondition in a process without
// credentials.
func (p *Driver) api() (*brightbox.Client, error) {
	if p.client == nil {
		msg := p.noAPI
		if msg == "" {
			msg = "the Brightbox API client is not initialized"
		}
		return nil, status.Error(codes.FailedPrecondition, msg)
	}
	return p.client, nil
}

// apiMessage is what an API error answer says: its error_name and errors.
func apiMessage(err error) string {
	var e *brightbox.APIError
	if !errors.As(err, &e) {
		return ""
	}
	return strings.TrimSpace(e.ErrorName + ": " + strings.Join(e.Errors, "; "))
}

// isVolumeID and isNodeID report whether id has the shape of a volume ID
// (vol-xxxxx) or a server ID (srv-xxxxx): any other names nothing, and
// must not reach a URL path (gobrightbox joins it into one).
func isVolumeID(id string) bool { return isResourceID("vol-", id) }
func isNodeID(id string) bool   { return isResourceID("srv-", id) }

// isResourceID reports whether id is prefix and base-36 digits, the shape
// of Brightbox's IDs ("a three letter code, a dash and approximately five
// alphanumeric characters", base 36).
func isResourceID(prefix, id string) bool {
	rest, ok := strings.CutPrefix(id, prefix)
	if !ok || rest == "" {
		return false
	}
	for _, ch := range rest {
		if (ch < 'a' || ch > 'z') && (ch < '0' || ch > '9') {
			return false
		}
	}
	return true
}

// noSuchVolume is csi.ErrNotFound for an ID no volume can have.
func noSuchVolume(id string) error {
	return fmt.Errorf("%q is not a Brightbox volume ID (vol-xxxxx): %w", truncateText(id, 80), csi.ErrNotFound)
}

// truncateText cuts s to n bytes, for errors that quote input.
func truncateText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

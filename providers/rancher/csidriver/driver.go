package csidriver

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strings"

	rancher "github.com/rancher/go-rancher/v2"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"k8s.io/klog/v2"

	"github.com/ccmkit/ccmkit/framework/cloudapi"
	"github.com/ccmkit/ccmkit/framework/csi"
	"github.com/ccmkit/ccmkit/providers/rancher/internal/cloud"
)

// This file is the Rancher 1.x provider of framework/csi, the first CSI
// driver for Cattle's volumes: the volume controller the existing CCM's
// README promised and never had. A Cattle volume is a record (name,
// storage driver, driverOpts, sizeMb) that Cattle keeps; the work is
// done on each host by the storage driver's Docker volume plugin
// (rancher/storage's rancher-nfs, rancher-ebs, ...), which the host's
// agent asks to create and mount the volume when a container uses it.
// The driver does the same:
//
//   - the controller creates and removes the Cattle records over the
//     Cattle API v2-beta, as go-rancher's VolumeClient does (POST
//     volumes; the remove and purge actions), with the CCM's credentials
//     and Cattle client (internal/cloud), in the storage driver the
//     StorageClass names; never waiting: while Cattle works it answers
//     csi.ErrPending;
//   - the node asks its host's volume plugin for the volume, as the
//     Docker daemon does for a container using it (VolumeDriver.Get,
//     Create with the volume's driverOpts when the host has it not yet,
//     as Rancher's agent creates it, then Mount), and the framework
//     bind-mounts the plugin's mountpoint at the target; Unmount after.
//     The node plugin makes no API call and needs no credentials;
//   - nothing is attached (a csi.SharedFilesystem): a volume whose
//     storage driver serves many hosts at once (volumeAccessMode
//     multiHostRW, rancher-nfs's) takes the multi-node access modes.
//
// No snapshots, no expansion: Cattle's volume snapshot and backup
// actions belong to storage drivers (Convoy, Longhorn of Rancher 1.x)
// that make them on the host, not to the API's record, and a volume's
// sizeMb is a record Cattle keeps, not a size it changes.

const mib = int64(1) << 20

// Driver is the Rancher provider of framework/csi. The zero value is not
// usable: New makes one.
type Driver struct {
	// lookupEnv reads the environment; nil is the process's (tests set it).
	lookupEnv func(string) (string, bool)

	cfg Config
	api *cloud.API
	// noAPI is why controller calls cannot be served: no credentials (""
	// when they can).
	noAPI string
	// node is this node (node plugin), plugins its host's volume plugins.
	node    csi.NodeInfo
	plugins *pluginClient
}

var (
	_ csi.Provider           = (*Driver)(nil)
	_ csi.SharedFilesystem   = (*Driver)(nil)
	_ csi.Initializer        = (*Driver)(nil)
	_ csi.Lister             = (*Driver)(nil)
	_ csi.ParameterValidator = (*Driver)(nil)
)

// New returns the Rancher CSI provider, configured when the driver
// starts (Init) from the environment (see Config):
//
//	p := csidriver.New()
//	csi.Main(p, p.CommandOptions()...)
func New() *Driver { return &Driver{} }

// CommandOptions are the csi.Main options of the driver binary: its
// description. It takes the framework's flags only; the rest is the
// environment.
func (p *Driver) CommandOptions() []csi.Option {
	return []csi.Option{
		csi.WithDescription("rancher-csi-driver is the CSI driver for Rancher 1.x (Cattle) volumes (" + DriverName +
			"). The controller creates and removes Cattle volumes in the storage driver a StorageClass names, with the Rancher " +
			"CCM's settings (CATTLE_URL, CATTLE_ACCESS_KEY, CATTLE_SECRET_KEY); the node plugin, named NODE_NAME, has the host's " +
			"Docker volume plugin of the storage driver (a socket in RANCHER_VOLUME_PLUGIN_DIR) mount the volume, and bind-mounts it."),
	}
}

// Name is the driver name, DriverName.
func (p *Driver) Name() string { return DriverName }

// TopologyKey is the package's TopologyKey: none (see its doc comment).
func (p *Driver) TopologyKey() string { return TopologyKey }

// Limits are Cattle's: a volume's sizeMb is whole MiB, with no bounds of
// the API's own (a storage driver may have some, or, as rancher-nfs,
// none: a share's subdirectory has no size); 1 GiB when none is asked
// for; no volumes-per-node limit (nothing is attached).
func (p *Driver) Limits() csi.Limits {
	return csi.Limits{MinBytes: mib, StepBytes: mib, DefaultBytes: 1 << 30}
}

// Init reads the configuration; a node plugin takes its name (NODE_NAME)
// and its host's volume plugins' directory, a controller connects to the
// Cattle API with the CCM's settings, failing with an error that names
// the setting at fault. A process serving both without credentials
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
		if err := cfg.checkNode(); err != nil {
			return err
		}
		p.node = csi.NodeInfo{ID: cfg.NodeName}
		p.plugins = newPluginClient(cfg.PluginDir)
	}
	if env.Mode == csi.ModeNode {
		return nil
	}
	if !cfg.hasCredentials() && env.Mode != csi.ModeController {
		p.noAPI = "no Cattle API settings (CATTLE_URL, CATTLE_ACCESS_KEY, CATTLE_SECRET_KEY): this process serves the node side only"
		env.Logger.Info("No Cattle API settings: serving the node side only; controller calls fail")
		return nil
	}
	if err := cfg.checkCredentials(); err != nil {
		return err
	}
	hc := cloudapi.NewClient(cloudapi.Options{Provider: cloud.ProviderName, Version: env.Version})
	a, err := cloud.Connect(ctx, cfg.credentials(), hc, csi.ErrNotFound)
	if err != nil {
		return err
	}
	for _, t := range []string{rancher.VOLUME_TYPE, rancher.STORAGE_DRIVER_TYPE} {
		if !a.HasType(t) {
			return fmt.Errorf("CATTLE_URL: the Cattle API at %s has no %q type: the driver needs Rancher 1.2 or later's volumes and storage drivers", a.URL, t)
		}
	}
	p.api = a
	env.Logger.Info("Rancher CSI controller initialized", "cattleURL", a.URL)
	return nil
}

// client returns the Cattle API, or FailedPrecondition in a process
// without credentials.
func (p *Driver) client() (*cloud.API, error) {
	if p.api == nil {
		msg := p.noAPI
		if msg == "" {
			msg = "the Cattle API client is not initialized"
		}
		return nil, status.Error(codes.FailedPrecondition, msg)
	}
	return p.api, nil
}

// A volume's CSI ID is <Cattle volume ID>/<storage driver>/<volume name>:
// the Cattle ID is the record the controller reads and removes; the
// driver and the name are what the node, which has no credentials, names
// the volume by to its host's volume plugin, also on
// NodeUnpublishVolume, which gets only the ID and the target.
type volumeRef struct {
	cattleID, driver, name string
}

func (r volumeRef) String() string { return r.cattleID + "/" + r.driver + "/" + r.name }

// maxVolumeID is the CSI spec's bound on a string field: 128 bytes.
const maxVolumeID = 128

// validCattleVolumeID is a Cattle volume's ID: 1v<n> (Cattle's IDs are
// "1", the type's prefix, and the record's number).
var validCattleVolumeID = regexp.MustCompile(`^1v[0-9]{1,18}$`)

// validVolumeName is a Docker volume's name, which a Cattle volume of a
// storage driver has (Docker refuses others: "[a-zA-Z0-9][a-zA-Z0-9_.-]"
// and at least two characters).
var validVolumeName = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9_.-]+$`)

// parseVolumeID parses a CSI volume ID; false for one no volume of the
// driver has (another driver's, hand-made, or cut).
func parseVolumeID(id string) (volumeRef, bool) {
	parts := strings.Split(id, "/")
	if len(id) > maxVolumeID || len(parts) != 3 {
		return volumeRef{}, false
	}
	r := volumeRef{cattleID: parts[0], driver: parts[1], name: parts[2]}
	if !validCattleVolumeID.MatchString(r.cattleID) || checkDriverName(r.driver) != nil || !validVolumeName.MatchString(r.name) {
		return volumeRef{}, false
	}
	return r, true
}

// noSuchVolume is csi.ErrNotFound for an ID no volume can have.
func noSuchVolume(id string) error {
	return fmt.Errorf("%q is not a volume ID of %s (<Cattle volume ID>/<storage driver>/<volume name>): %w",
		truncateText(id, 140), DriverName, csi.ErrNotFound)
}

// maxVolumeName bounds the Cattle name the driver gives a volume, so its
// ID stays within maxVolumeID.
const maxVolumeName = 64

// volumeName is the Cattle (and Docker) name of the volume a CSI
// CreateVolume names: the CSI name itself (external-provisioner's
// pvc-<UID>) when it is a Docker volume name of at most maxVolumeName
// bytes; else its start, made one, and a hash of the whole. The same CSI
// name always gives the same volume name, for the lookup by name.
func volumeName(csiName string) string {
	if len(csiName) <= maxVolumeName && validVolumeName.MatchString(csiName) {
		return csiName
	}
	var b strings.Builder
	for _, ch := range csiName {
		switch {
		case ch >= 'a' && ch <= 'z', ch >= 'A' && ch <= 'Z', ch >= '0' && ch <= '9':
			b.WriteRune(ch)
		case b.Len() > 0 && (ch == '_' || ch == '.' || ch == '-'):
			b.WriteRune(ch)
		case b.Len() > 0:
			b.WriteByte('-')
		}
		if b.Len() >= maxVolumeName-13 {
			break
		}
	}
	sum := sha256.Sum256([]byte(csiName))
	start := b.String()
	if start == "" {
		start = "csi"
	}
	return start + "-" + hex.EncodeToString(sum[:6])
}

// cattleMessage is what a Cattle error answer says, for errors that
// explain a refusal.
func cattleMessage(err error) string {
	var e *rancher.ApiError
	if !errors.As(err, &e) {
		return ""
	}
	return e.Body
}

package csidriver

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/volumes"
	"github.com/gophercloud/gophercloud/v2/pagination"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/ccmkit/ccmkit/framework/cloudapi"
	"github.com/ccmkit/ccmkit/framework/config"
	"github.com/ccmkit/ccmkit/framework/csi"
	"github.com/ccmkit/ccmkit/providers/openstack/internal/cloud"
)

// This file is the OpenStack Cinder provider of framework/csi: a drop-in
// for cloud-provider-openstack's cinder-csi-plugin (v1.36): its driver
// name, topology key, publish context, device paths, StorageClass and
// VolumeSnapshotClass parameters, cloud.conf (the CCM's openstack.Config,
// with [BlockStorage]) and flags. Unlike cinder-csi-plugin it never polls:
// attach, detach, expand and delete start the operation and answer
// csi.ErrPending while Cinder shows it under way (the framework answers
// Aborted and the sidecar retries); the retry reads the volume once and
// finds it done, or still under way.

const giB = int64(1) << 30

// Metadata cinder-csi-plugin sets on the volumes and snapshots it creates.
const (
	clusterMetadataKey = "cinder.csi.openstack.org/cluster"
	createdByCinderCSI = "Created by OpenStack Cinder CSI driver"
)

// Microversions cinder-csi-plugin uses, when [BlockStorage]
// ignore-volume-microversion is not set (Cinder), and for multiattach
// volumes (Nova).
const (
	volumeListFilterMicroversion   = "3.34" // filtering volume lists by name
	volumeOnlineExtendMicroversion = "3.42" // extending an in-use volume
	snapshotInUseMicroversion      = "3.66" // snapshotting an in-use volume without force (ccmkit's)
	multiattachMicroversion        = "2.60" // attaching a multiattach volume
)

// Driver is the OpenStack provider of framework/csi. The zero value is not
// usable: New makes one.
type Driver struct {
	flags *csiFlags
	// lookupEnv reads the environment; nil is the process's (tests set it).
	lookupEnv func(string) (string, bool)
	// clock times re-authentication backoff; nil is the real clock.
	clock clock.Clock
	// cloudAPI are the API client's options beyond what Init sets (tests:
	// no retries).
	cloudAPI cloudapi.Options

	cfg cloud.Config
	env Config
	// compute and volume are the Nova and Cinder v3 clients (controller).
	compute, volume *gophercloud.ServiceClient

	// noInUseSnapshots: the cloud answered 406 to snapshotInUseMicroversion.
	noInUseSnapshots atomic.Bool

	mu sync.Mutex
	// node is this server, from the instance metadata (node plugin); a
	// process serving both reads it on first use if Init could not.
	node     csi.NodeInfo
	nodeLazy bool
}

var (
	_ csi.Provider           = (*Driver)(nil)
	_ csi.Attacher           = (*Driver)(nil)
	_ csi.Initializer        = (*Driver)(nil)
	_ csi.Expander           = (*Driver)(nil)
	_ csi.Snapshotter        = (*Driver)(nil)
	_ csi.SnapshotParameters = (*Driver)(nil)
	_ csi.Lister             = (*Driver)(nil)
	_ csi.ParameterValidator = (*Driver)(nil)
)

// New returns the OpenStack Cinder CSI provider, configured when the
// driver starts (Init) from cinder-csi-plugin's flags (see
// CommandOptions), the --cloud-config file and the environment
// (Config):
//
//	p := csidriver.New()
//	csi.Main(p, p.CommandOptions()...)
func New() *Driver {
	return &Driver{flags: newCSIFlags()}
}

// CommandOptions are the csi.Main options of the driver binary:
// cinder-csi-plugin's flags and a description.
func (p *Driver) CommandOptions() []csi.Option {
	return []csi.Option{
		csi.WithFlags("OpenStack", p.flags.fs),
		// cinder-csi-plugin's manifests run its image with
		// /bin/cinder-csi-plugin as the first argument.
		csi.WithProgramArg("cinder-csi-plugin"),
		csi.WithDescription("openstack-csi-driver is the CSI driver for OpenStack Cinder volumes (" + DriverName +
			"), a drop-in for cloud-provider-openstack's cinder-csi-plugin: the same driver name, topology, publish context, " +
			"device paths, StorageClass parameters, cloud.conf and flags."),
		csi.WithServeOptions(func(o *csi.Options) {
			if o.MetricsAddress == "" {
				o.MetricsAddress = p.flags.httpEndpoint
			}
			// None left is Init's error, which names the flags.
			if mode, err := p.flags.serviceMode(o.Mode); err == nil {
				o.Mode = mode
			}
		}),
	}
}

// Name is the driver name: cinder.csi.openstack.org.
func (p *Driver) Name() string { return DriverName }

// TopologyKey is cinder-csi-plugin's, topology.cinder.csi.openstack.org/zone,
// or none with --with-topology=false.
func (p *Driver) TopologyKey() string {
	if p.flags != nil && !p.flags.withTopology {
		return ""
	}
	return TopologyKey
}

// Limits are Cinder's sizes, in GiB, 1 GiB when none is asked for (as
// cinder-csi-plugin), and [BlockStorage] node-volume-attach-limit volumes
// per node (DefaultNodeVolumeAttachLimit when unset).
func (p *Driver) Limits() csi.Limits {
	perNode := int64(p.cfg.BlockStorage.NodeVolumeAttachLimit)
	if perNode == 0 {
		perNode = DefaultNodeVolumeAttachLimit
	}
	return csi.Limits{MinBytes: giB, StepBytes: giB, DefaultBytes: giB, MaxPerNode: perNode}
}

// Init reads the configuration; a node plugin reads its server ID and
// zone from the instance metadata (config drive, metadata service), a
// controller authenticates with Keystone and checks it can use Cinder and
// Nova. A process serving both that cannot read the instance metadata
// yet (cinder-csi-plugin's controller Deployment serves the node service
// too) reads it on the first NodeGetInfo instead. No error or log line
// holds a secret.
func (p *Driver) Init(ctx context.Context, env *csi.Env) error {
	mode, err := p.flags.serviceMode(env.Mode)
	if err != nil {
		return err
	}
	if err := p.flags.check(); err != nil {
		return err
	}
	if p.env, err = loadCSIEnv(p.lookupEnv, p.flags); err != nil {
		return err
	}
	var notes []string
	if p.cfg, notes, err = loadCSICloudConfig(p.lookupEnv, p.flags.cloudConfig, mode); err != nil {
		return err
	}
	// The API requests Init makes log (redacted) through the driver's
	// logger, as the calls' requests do.
	ctx = klog.NewContext(ctx, env.Logger)
	for _, note := range notes {
		env.Logger.Info("Cloud config: " + note)
	}
	if p.flags.pvcAnnotations && mode != csi.ModeNode {
		env.Logger.Info("--pvc-annotations: the PVC annotations cinder.csi.openstack.org/affinity and anti-affinity are not read; volumes are created without scheduler hints")
	}
	if mode != csi.ModeController {
		node, err := readNodeMetadata(ctx, &p.cfg.Metadata, &p.env)
		switch {
		case err == nil:
			p.node = node
		case mode == csi.ModeNode:
			return err
		default:
			p.nodeLazy = true
			env.Logger.Info("Cannot read the instance metadata yet; NodeGetInfo reads it when asked", "err", err.Error())
		}
	}
	if mode == csi.ModeNode {
		return nil
	}
	return p.initController(ctx, env)
}

func (p *Driver) initController(ctx context.Context, env *csi.Env) error {
	g := &p.cfg.Global
	tc, err := cloud.TLSConfig(g)
	if err != nil {
		return err
	}
	o := p.cloudAPI
	o.Provider, o.Version, o.TLS, o.Timeout = cloud.ProviderName, env.Version, tc, p.cfg.Metadata.RequestTimeout
	hc := cloudapi.NewClient(o)
	// One --cloud-config file is followed for rotated credentials, as the
	// CCM follows its own; merged files are read once.
	var conf *cloud.ConfWatch
	if files := p.flags.cloudConfig; len(files) == 1 {
		conf = cloud.NewConfWatch(config.Source{File: files[0], Format: cloud.INI, LookupEnv: p.lookupEnv}, &p.cfg)
	}
	pc, err := cloud.Authenticate(ctx, g, hc, p.clock, conf)
	if err != nil {
		return err
	}
	if len(p.flags.userAgent) > 0 {
		pc.UserAgent.Prepend(p.flags.userAgent...)
	}
	availability, _ := cloud.EndpointAvailability(g.EndpointType) // checked by Validate
	eo := gophercloud.EndpointOpts{Region: g.Region, Availability: availability}
	compute, err := openstack.NewComputeV2(pc, eo)
	if err != nil {
		return fmt.Errorf("no compute (Nova) endpoint for [Global] region %q and os-endpoint-type %q in the Keystone catalog: %w",
			g.Region, availability, err)
	}
	volume, err := openstack.NewBlockStorageV3(pc, eo)
	if err != nil {
		return fmt.Errorf("no block storage (Cinder v3, catalog type block-storage or volumev3) endpoint for [Global] region %q and os-endpoint-type %q in the Keystone catalog: %w",
			g.Region, availability, err)
	}
	if err := cloud.CheckCompute(ctx, compute); err != nil {
		return err
	}
	if err := checkBlockStorage(ctx, volume); err != nil {
		return err
	}
	p.compute, p.volume = compute, volume
	env.Logger.Info("OpenStack CSI controller initialized", "authURL", cloud.RedactedURL(g.AuthURL), "region", g.Region,
		"blockStorageURL", cloud.RedactedURL(volume.Endpoint), "computeURL", cloud.RedactedURL(compute.Endpoint), "cluster", p.flags.cluster)
	return nil
}

// checkBlockStorage makes the cheapest authenticated Cinder call: one
// volume.
func checkBlockStorage(ctx context.Context, c *gophercloud.ServiceClient) error {
	ctx = cloudapi.WithOperation(ctx, "volumes.list")
	err := volumes.List(c, volumes.ListOpts{Limit: 1}).EachPage(ctx, func(context.Context, pagination.Page) (bool, error) {
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("cannot use the block storage (Cinder) API at %s: %w", cloud.RedactedURL(c.Endpoint), cloud.ServiceError(err))
	}
	return nil
}

// api returns the Cinder and Nova clients, or FailedPrecondition in a
// process that serves no controller.
func (p *Driver) api() (volume, compute *gophercloud.ServiceClient, err error) {
	if p.volume == nil || p.compute == nil {
		return nil, nil, status.Error(codes.FailedPrecondition, "the OpenStack API clients are not initialized (this process serves no controller)")
	}
	return p.volume, p.compute, nil
}

// withMicroversion is a copy of c that asks for microversion mv.
func withMicroversion(c *gophercloud.ServiceClient, mv string) *gophercloud.ServiceClient {
	cc := *c
	cc.Microversion = mv
	return &cc
}

// pathID escapes an ID from a CSI request for a URL path: the APIs' IDs
// (UUIDs) never change, anything else cannot leave its path segment
// (gophercloud joins IDs into URLs as they are).
func pathID(id string) string {
	return strings.ReplaceAll(url.PathEscape(id), ".", "%2E")
}

// The API answers the driver acts on.
const (
	// msgStatusMust starts Cinder's and Nova's "Invalid volume: Volume
	// status must be available ..." (400): the volume changed state
	// since it was read.
	msgStatusMust = "status must be"
	// msgDiskDevices is in Nova's 403 for an attach past the server's
	// max_disk_devices_to_attach ("The maximum allowed number of disk
	// devices (N) to attach to a single instance has been exceeded.").
	msgDiskDevices = "disk devices"
)

// apiStatus is the HTTP status of an API error answer, 0 for other
// errors.
func apiStatus(err error) int {
	var a *cloud.APIError
	if errors.As(err, &a) {
		return a.Status
	}
	var code gophercloud.ErrUnexpectedResponseCode
	if errors.As(err, &code) {
		return code.Actual
	}
	return 0
}

// has reports whether err is an API answer with status code (0: any)
// whose message contains text (case-insensitively).
func has(err error, code int, text string) bool {
	var a *cloud.APIError
	ok := errors.As(cloud.ServiceError(err), &a)
	return ok && (code == 0 || a.Status == code) && strings.Contains(strings.ToLower(a.Message), strings.ToLower(text))
}

// notFoundError is a 404 the API answered for the one resource a request
// named: csi.ErrNotFound (or csi.ErrNodeNotFound), with the API's error
// kept.
type notFoundError struct {
	what string
	kind error
	err  error
}

func (e *notFoundError) Error() string   { return e.what + ": " + e.kind.Error() }
func (e *notFoundError) Unwrap() []error { return []error{e.kind, e.err} }

// orNotFound is csi.ErrNotFound when the API said what is not there, err
// (described, without a response body) otherwise.
func orNotFound(err error, format string, args ...any) error {
	what := fmt.Sprintf(format, args...)
	if cloud.IsAPINotFound(err) {
		return &notFoundError{what: what, kind: csi.ErrNotFound, err: cloud.ServiceError(err)}
	}
	return fmt.Errorf("%s: %w", what, cloud.ServiceError(err))
}

// wrapAPI adds what was asked to an API error, keeping it for errors.Is.
func wrapAPI(err error, format string, args ...any) error {
	return fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), cloud.ServiceError(err))
}

// isStatus reports whether err is an API answer with status code.
func isStatus(err error, code int) bool { return apiStatus(err) == code }

package brightbox

import (
	"context"
	"errors"
	"fmt"
	"strings"

	brightbox "github.com/brightbox/gobrightbox/v2"
	"github.com/brightbox/gobrightbox/v2/enums/serverstatus"
	"k8s.io/klog/v2"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/framework/cloudapi"
)

// instances implements framework.Instances over Brightbox servers. The
// framework builds cloudprovider.InstancesV2 on it: providerID parsing, the
// lookup by name when a Node has no providerID yet, a shared cache served
// from ListInstances (one GET /1.0/servers per TTL however many Nodes), and
// the rule that only ErrNotFound means "gone".
type instances struct {
	client          *brightbox.Client
	legacyAddresses bool
}

var _ framework.Instances = (*instances)(nil)

// InstanceByID returns the server with the ID id (srv-xxxxx). Only the
// API's own 404 for it, or a server the API reports deleted or failed,
// wraps framework.ErrNotFound; every other failure stays an error, so the
// Node is kept.
func (i *instances) InstanceByID(ctx context.Context, id string) (*framework.Instance, error) {
	if !isServerID(id) {
		return nil, fmt.Errorf("%q is not a Brightbox server ID (srv-xxxxx)", id)
	}
	s, err := one(ctx, "servers.get", func(ctx context.Context) (*brightbox.Server, error) {
		return i.client.Server(ctx, id)
	})
	switch {
	case isNotFound(err):
		return nil, fmt.Errorf("server %s: %w (%w)", id, framework.ErrNotFound, err)
	case err != nil:
		return nil, fmt.Errorf("getting server %s: %w", id, err)
	case s == nil:
		return nil, fmt.Errorf("getting server %s: malformed response: no server", id)
	case s.ID != id:
		return nil, fmt.Errorf("getting server %s: malformed response: the API answered with server %q", id, s.ID)
	case gone(s):
		return nil, framework.NotFound("server %s is %s", id, s.Status)
	}
	return i.convert(ctx, s)
}

// InstanceByName returns the server backing the Node called name. The
// existing CCM requires the Node name to be the server ID (the server's
// hostname, which kubelet uses by default); a Node named after the
// server's name is accepted too. Only an authoritative answer is a
// not-found: the server's 404, or a complete list without that name. Two
// servers with the name are an error, not a guess.
func (i *instances) InstanceByName(ctx context.Context, name string) (*framework.Instance, error) {
	if isServerID(name) {
		return i.InstanceByID(ctx, name)
	}
	all, err := i.list(ctx)
	if err != nil {
		return nil, err
	}
	var found []*brightbox.Server
	malformed := 0
	for k := range all {
		switch s := &all[k]; {
		case !isServerID(s.ID):
			// Its name cannot be trusted either: it may be the one.
			malformed++
		case s.Name == name && !gone(s):
			found = append(found, s)
		}
	}
	s, err := framework.PickByName("server", name, found, malformed, func(s *brightbox.Server) string { return s.ID })
	if err != nil {
		return nil, err
	}
	return i.convert(ctx, s)
}

// ListInstances returns every live server of the account in one call,
// under both names a Node may carry, so that the framework's cache serves
// either without a call of its own: the server's name, and its ID as an
// alias (the existing CCM's convention, and kubelet's default, the
// server's hostname). A deleted or failed
// server is left out (it backs no Node), and so is a malformed one,
// logged: the other servers still serve their Nodes, and a Node whose
// server is missing from the list is looked up directly.
func (i *instances) ListInstances(ctx context.Context) ([]*framework.Instance, error) {
	all, err := i.list(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]*framework.Instance, 0, len(all))
	for k := range all {
		s := &all[k]
		if gone(s) {
			continue
		}
		inst, err := i.convert(ctx, s)
		if err != nil {
			klog.FromContext(ctx).Error(err, "Ignoring malformed server", "serverID", s.ID)
			continue
		}
		out = append(out, inst)
	}
	return out, nil
}

// list reads every server: the API's list is one bare JSON array, without
// pages.
func (i *instances) list(ctx context.Context) ([]brightbox.Server, error) {
	all, err := i.client.Servers(cloudapi.WithOperation(ctx, "servers.list"))
	if err != nil {
		return nil, fmt.Errorf("listing servers: %w", err)
	}
	return all, nil
}

// convert maps a server to what a Node needs. A server without an ID, zone
// or type is malformed: the Node's labels would be wrong or missing. So is
// one with an address that is no IP, or an active one without its private
// IPv4 address: an error keeps the Node's addresses, where half an answer
// would take some away.
func (i *instances) convert(ctx context.Context, s *brightbox.Server) (*framework.Instance, error) {
	switch {
	case !isServerID(s.ID):
		return nil, fmt.Errorf("malformed response: server ID %q", s.ID)
	case s.Zone == nil || s.Zone.Handle == "":
		return nil, fmt.Errorf("malformed response: server %s has no zone", s.ID)
	case s.ServerType == nil || s.ServerType.Handle == "":
		return nil, fmt.Errorf("malformed response: server %s has no server type", s.ID)
	}
	region, err := regionOfZone(s.Zone.Handle)
	if err != nil {
		return nil, fmt.Errorf("malformed response: server %s: %w", s.ID, err)
	}
	if err := checkInterfaces(s); err != nil {
		return nil, fmt.Errorf("malformed response: server %s: %w", s.ID, err)
	}
	addrs, err := nodeAddresses(s, i.legacyAddresses)
	if err != nil {
		// Left out, the address would be taken from the Node.
		return nil, fmt.Errorf("malformed response: server %s: %w", s.ID, err)
	}
	name := s.Name
	if name == "" {
		name = s.ID
	}
	return &framework.Instance{
		// A Node is named after the server, or (as the existing CCM
		// requires) after its ID: the cache and InstanceByName find both.
		ID:        s.ID,
		Name:      name,
		Aliases:   []string{s.ID},
		Type:      s.ServerType.Handle,
		Region:    region,
		Zone:      s.Zone.Handle,
		Shutdown:  s.Status == serverstatus.Inactive || s.Status == serverstatus.Unavailable,
		Addresses: addrs,
	}, nil
}

// checkInterfaces reports an active server without a network interface,
// or an interface without its IPv4 or IPv6 address: every Brightbox
// server has one, with both, so such an answer is half an answer.
func checkInterfaces(s *brightbox.Server) error {
	if s.Status == serverstatus.Active && len(s.Interfaces) == 0 {
		return errors.New("an active server without a network interface")
	}
	for _, iface := range s.Interfaces {
		switch {
		case iface.IPv4Address == "":
			return fmt.Errorf("interface %q without an IPv4 address", iface.ID)
		case iface.IPv6Address == "":
			return fmt.Errorf("interface %q without an IPv6 address", iface.ID)
		}
	}
	return nil
}

// isServerID reports whether id has the shape of a server ID, srv-xxxxx.
func isServerID(id string) bool {
	rest, ok := strings.CutPrefix(id, "srv-")
	return ok && rest != "" && !strings.ContainsAny(rest, "/?#")
}

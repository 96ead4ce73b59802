package openstack

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"unicode"

	"github.com/google/uuid"
	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/flavors"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"k8s.io/klog/v2"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/framework/cloudapi"
	"github.com/ccmkit/ccmkit/providers/openstack/internal/cloud"
)

// Nova's statuses of a server that is powered off, and running.
const (
	serverShutoff = "SHUTOFF"
	serverActive  = "ACTIVE"
)

// server is the part of a Nova server a Node needs.
type server struct {
	ID               string            `json:"id"`
	Name             string            `json:"name"`
	Status           string            `json:"status"`
	AccessIPv4       string            `json:"accessIPv4"`
	AccessIPv6       string            `json:"accessIPv6"`
	Flavor           map[string]any    `json:"flavor"`
	Addresses        novaAddresses     `json:"addresses"`
	Metadata         map[string]string `json:"metadata"`
	AvailabilityZone string            `json:"OS-EXT-AZ:availability_zone"`
}

// validate rejects a server Nova never answers with: one whose ID is no
// UUID (a Node given it as its providerID would later look its server up
// by it, find nothing, and be deleted) or without a name (Nova requires
// one; a route to it would name no Node), or active without any address
// (Nova lists the addresses of its interfaces; a Node would get none, and
// routes to it would read as blackholes).
func (s *server) validate() error {
	switch {
	case s.Status == serverActive && len(s.Addresses) == 0:
		return fmt.Errorf("malformed response: server %s is active without any address", s.ID)
	case len(s.ID) != len("00000000-0000-0000-0000-000000000000") || uuid.Validate(s.ID) != nil:
		return fmt.Errorf("malformed response: server ID %q is not a UUID", s.ID)
	case s.Name == "":
		return fmt.Errorf("malformed response: server %s has no name", s.ID)
	}
	return nil
}

// instances implements framework.Instances over Nova servers. The framework
// builds cloudprovider.InstancesV2 on it: providerID parsing, the lookup by
// name when a Node has no providerID yet, a shared cache served from
// ListInstances, and the rule that only ErrNotFound means "gone".
type instances struct {
	compute *gophercloud.ServiceClient
	region  string
	rules   addressRules
	flavors flavorNames
}

var _ framework.Instances = (*instances)(nil)

// InstanceByID returns the server with the ID id. Only Nova's own 404 for it
// wraps framework.ErrNotFound; every other failure stays an error, so the
// Node is kept.
func (i *instances) InstanceByID(ctx context.Context, id string) (*framework.Instance, error) {
	var s server
	err := servers.Get(cloudapi.WithOperation(ctx, "servers.get"), i.compute, id).ExtractInto(&s)
	switch {
	case cloud.IsAPINotFound(err):
		return nil, fmt.Errorf("server %s: %w (%w)", id, framework.ErrNotFound, cloud.ServiceError(err))
	case err != nil:
		return nil, fmt.Errorf("getting server %s: %w", id, cloud.ServiceError(err))
	case s.ID == "":
		return nil, fmt.Errorf("getting server %s: malformed response: no server", id)
	}
	if err := s.validate(); err != nil {
		return nil, fmt.Errorf("getting server %s: %w", id, err)
	}
	return i.convert(ctx, &s)
}

// InstanceByName returns the server backing the Node called name: the
// server with exactly that name, or whose lower-cased name it is (Node names
// are lower case; OCCM derives them so). Nova's name filter is a regular
// expression, matched case-sensitively or not depending on its database, so
// the query is the anchored, escaped name matching either case (see
// nameFilter) and the answer is compared exactly. Only a complete list
// without a match is a not-found (OCCM #3114); two matches are an error.
func (i *instances) InstanceByName(ctx context.Context, name string) (*framework.Instance, error) {
	list, err := i.listServers(ctx, servers.ListOpts{Name: nameFilter(name)})
	if err != nil {
		return nil, err
	}
	var found []*server
	malformed := 0
	for k := range list {
		s := &list[k]
		switch {
		case s.validate() != nil:
			malformed++
		case nodeName(s.Name) == name || s.Name == name:
			found = append(found, s)
		}
	}
	s, err := framework.PickByName("server", name, found, malformed, func(s *server) string { return s.ID })
	if err != nil {
		return nil, err
	}
	return i.convert(ctx, s)
}

// ListInstances returns every server of the project, all pages. A malformed
// server (see server.validate) is logged and left out. (A name two servers share is the
// framework's to refuse: its cache never picks one of them.)
func (i *instances) ListInstances(ctx context.Context) ([]*framework.Instance, error) {
	list, err := i.listServers(ctx, servers.ListOpts{})
	if err != nil {
		return nil, err
	}
	out := make([]*framework.Instance, 0, len(list))
	for k := range list {
		if err := list[k].validate(); err != nil {
			// Left out of the list, the server is looked up directly.
			klog.FromContext(ctx).Error(err, "Ignoring malformed server", "name", list[k].Name)
			continue
		}
		inst, err := i.convert(ctx, &list[k])
		if err != nil {
			return nil, err
		}
		out = append(out, inst)
	}
	return out, nil
}

// listServers reads servers/detail, following the servers_links pages
// (Nova's page size is its max_limit, 1000 by default), each decoded
// straight into server values (see cloud.EachPage). Any failure fails the
// whole list: a partial list must never make a server look deleted.
func (i *instances) listServers(ctx context.Context, opts servers.ListOpts) ([]server, error) {
	q, err := opts.ToServerListQuery()
	if err != nil {
		return nil, fmt.Errorf("listing servers: %w", err)
	}
	all, err := cloud.ListAll[server](cloudapi.WithOperation(ctx, "servers.list"), i.compute, i.compute.ServiceURL("servers", "detail")+q, "servers")
	if err != nil {
		return nil, fmt.Errorf("listing servers: %w", err)
	}
	return all, nil
}

// convert maps a server to what a Node needs. An address Nova garbles (not
// an IP) is a malformed response: leaving it out would hand the Node half
// its addresses, and an error keeps the ones it has.
func (i *instances) convert(ctx context.Context, s *server) (*framework.Instance, error) {
	typ, err := i.flavors.instanceType(ctx, i.compute, s.Flavor)
	if err != nil {
		return nil, fmt.Errorf("server %s: %w", s.ID, err)
	}
	addrs, err := nodeAddresses(s, i.rules)
	if err != nil {
		return nil, fmt.Errorf("server %s: malformed response: addresses: %w", s.ID, err)
	}
	return &framework.Instance{
		ID:        s.ID,
		Name:      nodeName(s.Name),
		Type:      typ,
		Region:    i.region,
		Zone:      cloud.SanitizeLabelValue(s.AvailabilityZone),
		Shutdown:  s.Status == serverShutoff,
		Addresses: addrs,
	}, nil
}

// nameFilter is Nova's name filter for name in any letter case: Nova
// matches it as a regular expression (in the database: MySQL REGEXP,
// PostgreSQL ~), so it is anchored, its metacharacters are escaped, and
// each letter is a two-case bracket expression, which every dialect reads
// alike (unlike a (?i) flag).
func nameFilter(name string) string {
	var b strings.Builder
	b.WriteByte('^')
	for _, r := range name {
		lower, upper := unicode.ToLower(r), unicode.ToUpper(r)
		if lower != upper {
			b.WriteString("[" + string(lower) + string(upper) + "]")
			continue
		}
		b.WriteString(regexp.QuoteMeta(string(r)))
	}
	b.WriteByte('$')
	return b.String()
}

// nodeName is the Node name of a server, as OCCM derives it: Node names are
// lower case.
func nodeName(serverName string) string { return strings.ToLower(serverName) }

// flavorNames resolves a server's flavor to its name: from the server
// itself with Nova microversion 2.47 or later, else with GET /flavors/{id},
// once per flavor (names of a flavor never change).
type flavorNames struct {
	mu    sync.Mutex
	names map[string]string // by flavor ID
}

// instanceType returns the instance-type label of a server's flavor: its
// name when that is a valid label value, else the name sanitized. A flavor
// deleted since (Nova's 404) falls back to its ID; any other failure is an
// error, since the label is set only once, when the Node is initialized;
// so is a flavor that names none.
func (f *flavorNames) instanceType(ctx context.Context, compute *gophercloud.ServiceClient, flavor map[string]any) (string, error) {
	if v, present := flavor["original_name"]; present {
		name, ok := v.(string)
		if !ok || name == "" {
			return "", errors.New("malformed response: the server's flavor original_name is not a name")
		}
		return cloud.SanitizeLabelValue(name), nil
	}
	// Before microversion 2.47 a server's flavor is its ID (and links).
	id, ok := flavor["id"].(string)
	if !ok || id == "" {
		return "", errors.New("malformed response: the server's flavor has neither original_name nor id")
	}
	f.mu.Lock()
	name, ok := f.names[id]
	f.mu.Unlock()
	if ok {
		return name, nil
	}
	fl, err := flavors.Get(cloudapi.WithOperation(ctx, "flavors.get"), compute, id).Extract()
	switch {
	case cloud.IsAPINotFound(err):
		klog.FromContext(ctx).V(2).Info("Flavor not found; using its ID as the instance type", "flavorID", id)
		name = cloud.SanitizeLabelValue(id)
	case err != nil:
		return "", fmt.Errorf("getting flavor %s: %w", id, cloud.ServiceError(err))
	default:
		name = cloud.SanitizeLabelValue(fl.Name)
	}
	f.mu.Lock()
	if f.names == nil {
		f.names = map[string]string{}
	}
	f.names[id] = name
	f.mu.Unlock()
	return name, nil
}

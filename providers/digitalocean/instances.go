package digitalocean

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strconv"

	"github.com/digitalocean/godo"
	"k8s.io/klog/v2"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/framework/cloudapi"
	"github.com/ccmkit/ccmkit/framework/nodeaddr"
	"github.com/ccmkit/ccmkit/providers/digitalocean/internal/cloud"
)

// The droplet statuses the provider acts on: a powered-off droplet is shut
// down; an active one always has an address.
const (
	dropletOff    = "off"
	dropletActive = "active"
)

// instances implements framework.Instances over droplets. The framework
// builds cloudprovider.InstancesV2 on it: providerID parsing, the lookup by
// name when a Node has no providerID yet, a shared cache served from
// ListInstances, and the rule that only ErrNotFound means "gone".
type instances struct {
	client        *godo.Client
	defaultRegion string
}

var _ framework.Instances = (*instances)(nil)

// InstanceByID returns the droplet with the ID id. Only the API's own 404
// for it wraps framework.ErrNotFound; every other failure stays an error, so
// the Node is kept.
func (i *instances) InstanceByID(ctx context.Context, id string) (*framework.Instance, error) {
	n, err := strconv.Atoi(id)
	if err != nil || n < 1 {
		return nil, fmt.Errorf("droplet ID %q is not a positive integer", id)
	}
	d, _, err := i.client.Droplets.Get(cloudapi.WithOperation(ctx, "droplets.get"), n)
	switch {
	case cloud.IsNotFound(err):
		return nil, fmt.Errorf("droplet %d: %w (%w)", n, framework.ErrNotFound, err)
	case err != nil:
		return nil, fmt.Errorf("getting droplet %d: %w", n, err)
	case d == nil:
		return nil, fmt.Errorf("getting droplet %d: malformed response: no droplet", n)
	}
	inst, err := i.convert(ctx, d)
	if err != nil {
		return nil, fmt.Errorf("getting droplet %d: %w", n, err)
	}
	return inst, nil
}

// InstanceByName returns the droplet backing the Node called name: the one
// with exactly that name or, as the existing CCM does, the one whose private
// IPv4, public IPv4 or public IPv6 is name. It lists the droplets the API
// finds by that name (its name filter, one call: a node joining a cluster
// of 5,000 costs one call, not 25 pages), or every droplet when name is an
// IP address; only a complete list of well-formed droplets without a match
// is a not-found. Two droplets that match are an error, not a guess.
func (i *instances) InstanceByName(ctx context.Context, name string) (*framework.Instance, error) {
	ip, _ := netip.ParseAddr(name)
	list := func(ctx context.Context, o *godo.ListOptions) ([]godo.Droplet, *godo.Response, error) {
		return i.client.Droplets.ListByName(ctx, name, o)
	}
	if ip.IsValid() {
		list = i.client.Droplets.List
	}
	all, err := cloud.ListAll(ctx, "droplets", list)
	if err != nil {
		return nil, err
	}
	var byName, byIP []*godo.Droplet
	malformed := 0
	for k := range all {
		d := &all[k]
		switch {
		case d.ID < 1 || d.Name == "":
			// The API gives every droplet both: this one may be the
			// Node's, under a name the answer lost.
			malformed++
		case d.Name == name:
			byName = append(byName, d)
		case ip.IsValid() && hasIP(d, ip):
			byIP = append(byIP, d)
		}
	}
	found := byName
	if len(found) == 0 {
		found = byIP
	}
	d, err := framework.PickByName("droplet", name, found, malformed, func(d *godo.Droplet) string { return strconv.Itoa(d.ID) })
	if err != nil {
		return nil, err
	}
	return i.convert(ctx, d)
}

// ListInstances returns every droplet, all pages, each page converted as
// it is read (the instance cache keeps a few strings of a droplet, not the
// SDK's record of it). A malformed droplet (no ID) is logged and left out:
// it cannot back a Node, and the other droplets still can.
func (i *instances) ListInstances(ctx context.Context) ([]*framework.Instance, error) {
	var out []*framework.Instance
	err := cloud.ListEach(ctx, "droplets", i.client.Droplets.List, func(page []godo.Droplet) error {
		for k := range page {
			inst, err := i.convert(ctx, &page[k])
			if err != nil {
				klog.FromContext(ctx).Error(err, "Ignoring malformed droplet", "name", page[k].Name)
				continue
			}
			out = append(out, inst)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// convert maps a droplet to what a Node needs. A droplet without an ID,
// an active one without an IP address, one that lists an address twice or
// one with an address that is no IP is malformed: an error keeps the
// Node's addresses, where half an answer would take some away.
func (i *instances) convert(ctx context.Context, d *godo.Droplet) (*framework.Instance, error) {
	if d.ID < 1 {
		return nil, errors.New("malformed response: droplet without an ID")
	}
	id := strconv.Itoa(d.ID)
	log := klog.FromContext(ctx)
	private, public4, public6 := dropletIPs(d)
	if private == "" && public4 == "" && public6 == "" {
		if d.Status == dropletActive {
			// Every active droplet has a public IPv4 address: an answer
			// without one is half an answer, and would take the Node's
			// addresses away.
			return nil, fmt.Errorf("malformed response: active droplet %s has no IP address", id)
		}
		log.Info("Droplet reports no networks", "dropletID", id, "status", d.Status)
	}
	if err := checkNetworks(d); err != nil {
		return nil, fmt.Errorf("malformed response: droplet %s: %w", id, err)
	}
	if err := checkFeatures(d, private, public6); err != nil {
		return nil, fmt.Errorf("malformed response: droplet %s: %w", id, err)
	}
	addrs, err := nodeaddr.NewBuilder(nodeaddr.DualStack).
		AddInternal(private).
		AddExternal(public4, public6).
		AddHostname(d.Name).
		Build()
	if err != nil {
		// Left out, the address would be taken from the Node.
		return nil, fmt.Errorf("malformed response: droplet %s: %w", id, err)
	}
	inst := &framework.Instance{
		ID:        id,
		Name:      d.Name,
		Type:      d.SizeSlug,
		Region:    i.defaultRegion,
		Shutdown:  d.Status == dropletOff,
		Addresses: addrs,
	}
	if inst.Type == "" && d.Size != nil {
		inst.Type = d.Size.Slug
	}
	if d.Region != nil && d.Region.Slug != "" {
		inst.Region = d.Region.Slug
	}
	return inst, nil
}

// dropletIPs returns the first private IPv4, public IPv4 and public IPv6,
// as the existing CCM (through godo's helpers) does. A droplet without
// networks has none.
func dropletIPs(d *godo.Droplet) (private, public4, public6 string) {
	if d.Networks == nil {
		return "", "", ""
	}
	private, _ = d.PrivateIPv4()
	public4, _ = d.PublicIPv4()
	public6, _ = d.PublicIPv6()
	return private, public4, public6
}

// checkNetworks rejects networks that list an address twice, or one
// without its address or of a type other than public or private: the API
// lists each of a droplet's addresses once, typed, and a list that
// repeats one or garbles one leaves an address out.
func checkNetworks(d *godo.Droplet) error {
	if d.Networks == nil {
		return nil
	}
	seen := map[string]bool{}
	check := func(ip, typ string) error {
		switch {
		case ip == "" || typ != "public" && typ != "private":
			return fmt.Errorf("networks list an address %q of type %q", ip, typ)
		case seen[ip]:
			return fmt.Errorf("networks list %s twice", ip)
		}
		seen[ip] = true
		return nil
	}
	for _, n := range d.Networks.V4 {
		if err := check(n.IPAddress, n.Type); err != nil {
			return err
		}
	}
	for _, n := range d.Networks.V6 {
		if err := check(n.IPAddress, n.Type); err != nil {
			return err
		}
	}
	return nil
}

// checkFeatures reports an active droplet whose networks lack the address
// a feature it lists promises: an IPv6 address for "ipv6", a private one
// for "private_networking". Such an answer is half an answer, and would
// take the address from the Node.
func checkFeatures(d *godo.Droplet, private, public6 string) error {
	if d.Status != dropletActive {
		return nil
	}
	switch {
	case slices.Contains(d.Features, "ipv6") && public6 == "":
		return errors.New(`the droplet has the "ipv6" feature but no IPv6 address`)
	case slices.Contains(d.Features, "private_networking") && private == "":
		return errors.New(`the droplet has the "private_networking" feature but no private IPv4 address`)
	}
	return nil
}

// hasIP reports whether ip is one of the droplet's addresses a Node could
// be named after.
func hasIP(d *godo.Droplet, ip netip.Addr) bool {
	private, public4, public6 := dropletIPs(d)
	for _, s := range []string{private, public4, public6} {
		if a, err := netip.ParseAddr(s); err == nil && a.Unmap() == ip.Unmap() {
			return true
		}
	}
	return false
}

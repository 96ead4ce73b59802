package triton

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/joyent/triton-go/compute"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	"github.com/ccmkit/ccmkit/providers/triton/internal/cloud"
)

// This file finds what the load balancers are made of and on: the
// appliance's image, package and networks, and the machines of the nodes.

// errNoImage: the account sees no active image of the appliance's name.
var errNoImage = errors.New("no Moirai appliance image")

// machinePage is CloudAPI's largest page of machines.
const machinePage = 1000

// resolvedCache holds the appliance image and default package once found.
type resolvedCache struct {
	mu         sync.Mutex
	image, pkg string
}

// image returns the appliance image's UUID: TRITON_LB_IMAGE when it is
// one, else the newest active image of that name the account can see
// (errNoImage when there is none). It is looked up once.
func (d *lbDriver) image(ctx context.Context) (string, error) {
	c := &d.resolved
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.image != "" {
		return c.image, nil
	}
	name := d.settings.Image
	if name == "" {
		name = defaultLBImage
	}
	if cloud.IsUUID(name) {
		c.image = name
		return name, nil
	}
	imgs, err := d.api.Compute().Images().List(withOp(ctx, "images.list"), &compute.ListImagesInput{Name: name, State: "active"})
	if err != nil {
		return "", fmt.Errorf("TRITON_LB_IMAGE: listing images named %s: %w", name, err)
	}
	var newest *compute.Image
	for _, img := range imgs {
		if img == nil || img.ID == "" || img.Name != name || img.State != "" && img.State != "active" {
			continue
		}
		if newest == nil || img.PublishedAt.After(newest.PublishedAt) {
			newest = img
		}
	}
	if newest == nil {
		return "", fmt.Errorf("TRITON_LB_IMAGE: %w: the account sees no active image named %s (an operator imports it from updates.tritondatacenter.com)", errNoImage, name)
	}
	c.image = newest.ID
	return newest.ID, nil
}

// pkg returns the appliance's package: the Service's annotation,
// TRITON_LB_PACKAGE, or the account's smallest package by memory among
// those for zones (the appliance is a SmartOS zone), looked up once.
func (d *lbDriver) pkg(ctx context.Context, annotated string) (string, error) {
	switch {
	case annotated != "":
		return annotated, nil
	case d.settings.Package != "":
		return d.settings.Package, nil
	}
	c := &d.resolved
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pkg != "" {
		return c.pkg, nil
	}
	pkgs, err := d.api.Compute().Packages().List(withOp(ctx, "packages.list"), &compute.ListPackagesInput{})
	if err != nil {
		return "", fmt.Errorf("TRITON_LB_PACKAGE unset: listing packages to pick the smallest: %w", err)
	}
	var best *compute.Package
	for _, p := range pkgs {
		if p == nil || p.Name == "" || p.Brand != "" && p.Brand != "joyent" {
			continue
		}
		if best == nil || p.Memory < best.Memory || p.Memory == best.Memory && p.Name < best.Name {
			best = p
		}
	}
	if best == nil {
		return "", errors.New("TRITON_LB_PACKAGE unset and the account has no package for zones: set it")
	}
	c.pkg = best.Name
	return best.Name, nil
}

// forgetResolved drops what an appliance's create was made of (its image,
// default package and the network list), so that the next create looks
// them up again. Called when a create fails: what was cached may be what
// made it fail (an image deleted since, a package retired, a public
// network added since, or one answer that was wrong), and kept, it would
// fail every create until a restart.
func (d *lbDriver) forgetResolved() {
	d.resolved.mu.Lock()
	d.resolved.image, d.resolved.pkg = "", ""
	d.resolved.mu.Unlock()
	d.api.forgetNetworks()
}

// applianceNetworks are the appliance's networks: TRITON_LB_NETWORKS (names
// or IDs), or the first public network by name plus the non-public
// networks the target machines are on.
func (d *lbDriver) applianceNetworks(ctx context.Context, targets []string) ([]string, error) {
	nets, err := d.api.networks(ctx, false)
	if err != nil {
		return nil, err
	}
	if len(d.settings.Networks) > 0 {
		out := make([]string, 0, len(d.settings.Networks))
		for _, want := range d.settings.Networks {
			id := ""
			for _, n := range nets {
				if n.Id == want || n.Name == want {
					id = n.Id
					break
				}
			}
			if id == "" {
				return nil, fmt.Errorf("TRITON_LB_NETWORKS: the account has no network %q", want)
			}
			out = append(out, id)
		}
		return slices.Compact(out), nil
	}
	var public []string
	for _, n := range nets {
		if n.Public {
			public = append(public, n.Name+"\x00"+n.Id)
		}
	}
	if len(public) == 0 {
		return nil, errors.New("TRITON_LB_NETWORKS unset and the account has no public network: set it")
	}
	slices.Sort(public)
	_, first, _ := strings.Cut(public[0], "\x00")
	out := []string{first}
	if len(targets) > 0 {
		m, _, err := d.nodeMachine(ctx, targets[0], nil)
		if err != nil {
			return nil, fmt.Errorf("reading a node's networks for the load balancer: %w", err)
		}
		for _, id := range m.Networks {
			if n, ok := nets[id]; ok && !n.Public && !slices.Contains(out, id) {
				out = append(out, id)
			}
		}
	}
	return out, nil
}

// targetMachines are the machine UUIDs of nodes, sorted. A Node without a
// (Triton) providerID is left out until it has one.
func (d *lbDriver) targetMachines(ctx context.Context, nodes []*corev1.Node) []string {
	ids := make([]string, 0, len(nodes))
	for _, n := range nodes {
		id, err := d.codec.Parse(n.Spec.ProviderID)
		if n.Spec.ProviderID == "" || err != nil || !cloud.IsUUID(id.Value) {
			klog.FromContext(ctx).V(2).Info("Leaving node out of the load balancer until it has a Triton providerID", "node", klog.KObj(n), "providerID", n.Spec.ProviderID)
			continue
		}
		ids = append(ids, id.Value)
	}
	slices.Sort(ids)
	return slices.Compact(ids)
}

// listMachines lists the machines tagged key=value, every page.
func (a *api) listMachines(ctx context.Context, key, value string) ([]*compute.Instance, error) {
	return a.listMachinesWhere(ctx, map[string]any{key: value}, "tagged "+key+"="+value)
}

// listMachinesWhere lists the machines with these tags (nil: every machine
// of the account), every page CloudAPI's offset reaches; what names them.
// A page holding a machine checkMachine refuses is a malformed response.
func (a *api) listMachinesWhere(ctx context.Context, tags map[string]any, what string) ([]*compute.Instance, error) {
	var out []*compute.Instance
	for offset := 0; ; offset += machinePage {
		page, err := cloud.Guarded("machines.list", func() ([]*compute.Instance, error) {
			return a.Compute().Instances().List(withOp(ctx, "machines.list"), &compute.ListInstancesInput{
				Tags: tags, Limit: machinePage, Offset: uint16(offset),
			})
		})
		if err != nil {
			return nil, fmt.Errorf("listing machines %s: %w", what, err)
		}
		for _, m := range page {
			if err := checkMachine(m); err != nil {
				return nil, fmt.Errorf("listing machines %s: %w", what, err)
			}
			m.CNS.Services = a.services.Of(m.CNS.Services) // before the next page is decoded
		}
		out = append(out, page...)
		if len(page) < machinePage || offset+machinePage > 65535 {
			return out, nil
		}
	}
}

// readMachines returns the machines ids (those it finds) from one list of
// the account's machines when that costs fewer calls than a GET each
// (CloudAPI counts them first: a HEAD), else nil: read them one by one.
// The first sync of the first Service meets a thousand nodes not tagged
// yet, so not in the cluster's list.
func (d *lbDriver) readMachines(ctx context.Context, ids []string) (map[string]*compute.Instance, error) {
	if len(ids) < 3 { // a count and a page are two calls
		return nil, nil
	}
	n, err := d.api.Compute().Instances().Count(withOp(ctx, "machines.count"), &compute.ListInstancesInput{})
	if err != nil {
		return nil, fmt.Errorf("counting the account's machines: %w", err)
	}
	if pages := (n + machinePage - 1) / machinePage; n <= 0 || 1+pages >= len(ids) {
		return nil, nil
	}
	all, err := d.api.listMachinesWhere(ctx, nil, "of the account")
	if err != nil {
		return nil, err
	}
	out := make(map[string]*compute.Instance, len(ids))
	for _, id := range ids {
		out[id] = nil
	}
	for _, m := range all {
		if _, wanted := out[m.ID]; wanted {
			out[m.ID] = m
		}
	}
	return out, nil
}

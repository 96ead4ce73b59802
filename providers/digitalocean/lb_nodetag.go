package digitalocean

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"sync"

	"github.com/digitalocean/godo"
	"k8s.io/klog/v2"

	"github.com/ccmkit/ccmkit/framework/cloudapi"
	"github.com/ccmkit/ccmkit/providers/digitalocean/internal/cloud"
)

// This file keeps the droplet tag that load balancers in tag mode target
// (DO_LB_DROPLET_TAG) on exactly the droplets of the load balancers' nodes.
//
// Listing droplet IDs costs one PUT per load balancer when a node joins or
// leaves: 200 LoadBalancer Services, 200 PUTs. A load balancer that
// targets a tag follows the tag's droplets by itself, so the node change
// costs the tag's change, made once for all of them. The service
// controller still syncs every Service; what makes the other 199 syncs
// free is the memo below: the droplets the tag was last made equal to.
// A sync whose nodes give the same droplets makes no call; the first one
// with new droplets tags and untags what differs (one call each).
//
// The memo is read from the API (the tag, and every droplet: which carry
// the tag, and which nodes' droplets still exist) only when the CCM
// starts, or after a write failed: the tag belongs to the CCM, and nothing
// else is expected to change it.

// nodeTag is the tag and its memo, shared by every load balancer of the
// provider.
type nodeTag struct {
	name   string
	client *godo.Client

	// mu is held for a whole sync, calls included: two syncs with the
	// same new node never both tag it.
	mu sync.Mutex
	// tagged are the droplets carrying the tag, sorted, as last read or
	// made; valid when known.
	tagged []int
	known  bool
	// gone are nodes' droplets the last read did not find: deleted before
	// their Node, which the node lifecycle controller deletes soon. They
	// cannot be tagged (the API refuses the whole call), and a droplet ID
	// is never reused, so they are left out until their Node goes.
	gone map[int]bool
}

func newNodeTag(name string, c *godo.Client) *nodeTag {
	if name == "" {
		return nil
	}
	return &nodeTag{name: name, client: c, gone: map[int]bool{}}
}

// sync makes the droplets carrying the tag exactly the droplets current
// returns (sorted, without repeats: what dropletIDs returns), those
// deleted already aside. current is called under the tag's lock, so that
// a sync that waited for it reads the Nodes as they are after the sync it
// waited for (LoadBalancerRequest.CurrentNodes). It adds the tag only to
// those droplets and takes it off only droplets that carry it. A write
// that the API refuses for what the memo believed (a droplet deleted
// since, the tag deleted by hand) is tried once more after reading
// everything again.
func (t *nodeTag) sync(ctx context.Context, current func() []int) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	nodes := current()
	for id := range t.gone {
		if _, ok := slices.BinarySearch(nodes, id); !ok {
			delete(t.gone, id) // its Node went too
		}
	}
	if t.known && slices.Equal(t.tagged, t.present(nodes)) {
		return nil
	}
	fresh := !t.known
	err := t.apply(ctx, nodes)
	if err != nil && !fresh && staleMemo(err) {
		klog.FromContext(ctx).V(2).Info("Reading the load balancers' droplet tag again after a refused write", "tag", t.name, "err", err)
		err = t.apply(ctx, nodes)
	}
	if err != nil {
		t.known = false
		return fmt.Errorf("droplet tag %s (DO_LB_DROPLET_TAG): %w", t.name, err)
	}
	return nil
}

// present is nodes without the droplets known to be gone.
func (t *nodeTag) present(nodes []int) []int {
	if len(t.gone) == 0 {
		return nodes
	}
	return slices.DeleteFunc(slices.Clone(nodes), func(id int) bool { return t.gone[id] })
}

// staleMemo reports whether the API refused a tag write in a way an
// out-of-date memo explains: 404 (the tag is gone) or 422 (a droplet is).
func staleMemo(err error) bool {
	switch cloud.StatusOf(err) {
	case http.StatusNotFound, http.StatusUnprocessableEntity:
		return true
	}
	return false
}

// apply reads the tag when the memo is not known, then tags the droplets
// of nodes that lack it and untags those that have it and are not nodes'
// droplets: at most one call each. The memo follows every write that
// succeeded; the caller forgets it when apply fails.
func (t *nodeTag) apply(ctx context.Context, nodes []int) error {
	if !t.known {
		if err := t.read(ctx, nodes); err != nil {
			return err
		}
	}
	want := t.present(nodes)
	add, remove := setDiff(want, t.tagged)
	log := klog.FromContext(ctx)
	if len(add) > 0 {
		log.V(2).Info("Tagging load-balancer droplets", "tag", t.name, "droplets", add)
		_, err := t.client.Tags.TagResources(cloudapi.WithOperation(ctx, "tags.tag_resources"), t.name,
			&godo.TagResourcesRequest{Resources: dropletResources(add)})
		if err != nil {
			t.known = false
			return fmt.Errorf("tagging droplets %v: %w", add, err)
		}
		t.tagged = sortedUnion(t.tagged, add)
	}
	if len(remove) > 0 {
		log.V(2).Info("Untagging droplets that left the load balancers", "tag", t.name, "droplets", remove)
		_, err := t.client.Tags.UntagResources(cloudapi.WithOperation(ctx, "tags.untag_resources"), t.name,
			&godo.UntagResourcesRequest{Resources: dropletResources(remove)})
		if err != nil {
			t.known = false
			return fmt.Errorf("untagging droplets %v: %w", remove, err)
		}
	}
	t.tagged = slices.Clone(want)
	return nil
}

// read fills the memo: the droplets carrying the tag, and which of nodes'
// droplets are gone. It creates the tag when the API says it does not
// exist (tagging needs it, and a load balancer may only target a tag that
// exists). It reads every droplet rather than the tag's alone
// (?tag_name=), for the same cost when the account holds little else: a
// node's droplet deleted before its Node is then left out, instead of
// making every tag write fail until the Node goes.
func (t *nodeTag) read(ctx context.Context, nodes []int) error {
	_, _, err := t.client.Tags.Get(cloudapi.WithOperation(ctx, "tags.get"), t.name)
	switch {
	case cloud.IsNotFound(err):
		klog.FromContext(ctx).Info("Creating the droplet tag load balancers target", "tag", t.name)
		if _, _, err := t.client.Tags.Create(cloudapi.WithOperation(ctx, "tags.create"), &godo.TagCreateRequest{Name: t.name}); err != nil {
			return fmt.Errorf("creating the tag: %w", err)
		}
	case err != nil:
		return fmt.Errorf("reading the tag: %w", err)
	}
	exists := map[int]bool{}
	tagged := []int{}
	err = cloud.ListEach(ctx, "droplets", t.client.Droplets.List, func(page []godo.Droplet) error {
		for k := range page {
			d := &page[k]
			if d.ID <= 0 {
				return errors.New("malformed response: a droplet without ID")
			}
			exists[d.ID] = true
			if slices.Contains(d.Tags, t.name) {
				tagged = append(tagged, d.ID)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, id := range nodes {
		if !exists[id] && !t.gone[id] {
			klog.FromContext(ctx).Info("Leaving a node out of the load balancers' droplet tag: its droplet is gone", "tag", t.name, "droplet", id)
			t.gone[id] = true
		}
	}
	slices.Sort(tagged)
	t.tagged, t.known = slices.Compact(tagged), true
	return nil
}

// setDiff returns what is in want and not in have, and what is in have
// and not in want; both are sorted.
func setDiff(want, have []int) (add, remove []int) {
	for _, id := range want {
		if _, ok := slices.BinarySearch(have, id); !ok {
			add = append(add, id)
		}
	}
	for _, id := range have {
		if _, ok := slices.BinarySearch(want, id); !ok {
			remove = append(remove, id)
		}
	}
	return add, remove
}

func sortedUnion(a, b []int) []int {
	u := slices.Concat(a, b)
	slices.Sort(u)
	return slices.Compact(u)
}

func dropletResources(ids []int) []godo.Resource {
	out := make([]godo.Resource, len(ids))
	for i, id := range ids {
		out[i] = godo.Resource{ID: strconv.Itoa(id), Type: godo.DropletResourceType}
	}
	return out
}

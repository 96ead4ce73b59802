package triton

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"strings"

	"github.com/joyent/triton-go/compute"
	"k8s.io/klog/v2"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/providers/triton/internal/cloud"
)

// This file edits the nodes' triton.cns.services tags, shared by both
// modes: Moirai's node service and the CNS mode's per-Service entries. The
// tag is the machine's, and its user's too: every edit keeps the entries
// of other services, under a lock per machine (keyed_mutex.go: kept only
// while an edit holds or waits for it), so two Services editing one node
// never lose each other's entries. The shared list of the cluster's
// machines (lb_machines.go), where this process's own writes are at once,
// tells which nodes need an edit, so a sync with nothing to change makes
// no call; an edit reads the tag afresh (one GET of it) before it writes,
// so an entry the user added since the list is kept. Every node edited is
// tagged k8s-cluster=<cluster>, so that one filtered list finds them all
// again.

// syncNodeEntries makes label's entries on the cluster's machines exactly
// want (machine UUID -> entries): the machines in want get theirs, every
// other node of the cluster loses label's. The shared list of the
// cluster's machines tells which differ; only those are written, so a sync
// with nothing to change makes no call when the list is fresh. It reports
// whether it wrote.
func (d *lbDriver) syncNodeEntries(ctx context.Context, label string, want map[string][]cnsEntry) (bool, error) {
	cluster, err := d.machines.all(ctx, false)
	if err != nil {
		return false, err
	}
	wrote := false
	seen := make(map[string]bool, len(cluster))
	for _, m := range cluster {
		if _, appliance := m.Tags[serviceUIDTag]; appliance || m.State == machineDeleted {
			continue
		}
		seen[m.ID] = true
		if sameEntries(cnsEntriesIn(m.CNS.Services, label), want[m.ID]) {
			continue
		}
		w, err := d.setNodeEntries(ctx, m.ID, label, want[m.ID], nil)
		wrote = wrote || w
		if err != nil {
			return wrote, err
		}
	}
	// Nodes not tagged yet: read (many from one list of the account's
	// machines), tagged and written once.
	var untagged []string
	for id := range want {
		if !seen[id] {
			untagged = append(untagged, id)
		}
	}
	read, err := d.readMachines(ctx, untagged)
	if err != nil {
		return wrote, err
	}
	for _, id := range untagged {
		w, err := d.setNodeEntries(ctx, id, label, want[id], read[id])
		wrote = wrote || w
		if err != nil {
			return wrote, err
		}
	}
	return wrote, nil
}

// setNodeEntries makes label's entries on machine id exactly want, keeping
// the others, with at most one write under the machine's lock. It reads
// the tags from the shared list (where this process's own writes are at
// once), or, for a machine the list lacks (not tagged with the cluster
// yet), from read (the machine as just listed), or with a GET. A machine
// gone (404, 410) needs nothing.
func (d *lbDriver) setNodeEntries(ctx context.Context, id, label string, want []cnsEntry, read *compute.Instance) (bool, error) {
	defer d.nodeLocks.lock(id)()
	m, cached, err := d.nodeMachine(ctx, id, read)
	switch {
	case framework.IsNotFound(err):
		d.machines.forget(id)
		return false, nil
	case err != nil:
		return false, err
	case m.State == machineDeleted:
		return false, nil
	}
	_, tagged := m.Tags[clusterTag]
	if sameEntries(cnsEntriesIn(m.CNS.Services, label), want) && (tagged || len(want) == 0) {
		return false, nil
	}
	if cached {
		// A write replaces the whole tag: read it afresh, so that entries
		// the user added since the list are kept.
		current, err := d.cnsServices(ctx, id)
		switch {
		case machineGone(err):
			d.machines.forget(id)
			return false, nil
		case err != nil:
			return false, err
		}
		m = d.api.withTags(m, map[string]string{cnsServicesTag: current})
		if sameEntries(cnsEntriesIn(m.CNS.Services, label), want) && (tagged || len(want) == 0) {
			// The tag is not as listed: someone edited it, or one of
			// the two answers was wrong. Neither is taken on trust;
			// the next sync lists afresh and mends what is left.
			d.machines.expire()
			return false, nil
		}
	}
	have := parseCNSServices(m.CNS.Services)
	next := withCNSEntries(have, label, want)
	logger := klog.FromContext(ctx).V(2).WithValues("machine", id, "service", label)
	if len(next) == 0 {
		logger.Info("Removing the machine's last CNS service")
		_, err = one(ctx, "machines.tags.delete", func(ctx context.Context) (struct{}, error) {
			return struct{}{}, d.api.Compute().Instances().DeleteTag(ctx, &compute.DeleteTagInput{ID: id, Key: cnsServicesTag})
		})
		switch {
		case machineGone(err):
			d.machines.forget(id)
			return false, nil
		case err != nil && !notFound(err): // 404: the tag is not there
			return false, fmt.Errorf("deleting tag %s of machine %s: %w", cnsServicesTag, id, err)
		}
		d.machines.store(d.api.withTags(m, nil))
		return true, nil
	}
	tags := map[string]string{cnsServicesTag: formatCNSServices(next)}
	if !tagged {
		tags[clusterTag] = d.cluster
	}
	logger.Info("Updating the machine's CNS services", "services", tags[cnsServicesTag])
	if _, err := one(ctx, "machines.tags.add", func(ctx context.Context) (struct{}, error) {
		return struct{}{}, d.api.Compute().Instances().AddTags(ctx, &compute.AddTagsInput{ID: id, Tags: tags})
	}); err != nil {
		if notFound(err) || machineGone(err) {
			d.machines.forget(id)
			return false, nil
		}
		return false, fmt.Errorf("tagging machine %s: %w", id, err)
	}
	d.machines.store(d.api.withTags(m, tags))
	return true, nil
}

// cnsServices reads machine id's triton.cns.services tag as it is now
// ("" when it has none).
func (d *lbDriver) cnsServices(ctx context.Context, id string) (string, error) {
	v, err := one(ctx, "machines.tags.get", func(ctx context.Context) (string, error) {
		return d.api.Compute().Instances().GetTag(ctx, &compute.GetTagInput{ID: id, Key: cnsServicesTag})
	})
	switch {
	case notFound(err):
		return "", nil
	case err != nil:
		return "", fmt.Errorf("reading tag %s of machine %s: %w", cnsServicesTag, id, err)
	}
	return v, nil
}

// machineGone reports whether err, from a write to a machine's tags or
// metadata, is CloudAPI's 410 Gone: the machine is deleted. (The shared
// list may still hold a machine deleted since it was listed; the write
// then meets the 410 the GET before it used to.)
func machineGone(err error) bool { return cloud.StatusOf(err) == http.StatusGone }

// nodeMachine returns machine id from the shared list (which may be up to
// a TTL old: cached reports true); when the list lacks it, read (when set:
// just listed) or a GET.
func (d *lbDriver) nodeMachine(ctx context.Context, id string, read *compute.Instance) (m *compute.Instance, cached bool, err error) {
	m, err = d.machines.get(ctx, id)
	switch {
	case m != nil || err != nil:
		return m, m != nil, err
	case read != nil:
		return read, false, nil
	}
	m, err = d.machine(ctx, id)
	return m, false, err
}

// withTags is m as CloudAPI has it after tags were merged into its own: a
// triton.cns.services among them (as triton-go reads it, into CNS); none
// means that tag was deleted. The services list is the one equal lists
// share (api.services).
func (a *api) withTags(m *compute.Instance, tags map[string]string) *compute.Instance {
	next := *m
	next.Tags = maps.Clone(m.Tags)
	if next.Tags == nil {
		next.Tags = map[string]any{}
	}
	next.CNS.Services = nil
	if v, ok := tags[cnsServicesTag]; ok {
		next.CNS.Services = a.services.Of(strings.Split(v, ","))
	}
	for k, v := range tags {
		if k != cnsServicesTag {
			next.Tags[k] = v
		}
	}
	return &next
}

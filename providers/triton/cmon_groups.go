package triton

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/joyent/triton-go/compute"
	"k8s.io/klog/v2"

	"github.com/ccmkit/ccmkit/framework"
)

// This file keeps the cluster's CMON group in the triton.cmon.groups tag
// of every node's machine, which is what CMON's discovery filters on
// (?groups=<group>) and so what the Prometheus job finds. The tag is the
// user's too: the group is added to the groups it holds, never replacing
// them, and a machine is written only when its tag lacks the group. A
// write sends that one tag (CloudAPI merges it into the machine's tags), so
// it cannot lose the load balancers' triton.cns.services, which they write
// the same way; the controller's single worker makes its read-modify-write
// of the tag the only one. A Node that leaves needs nothing: its machine
// goes with it.

// cmonGroupsTag is the machine tag CMON's discovery reads.
const cmonGroupsTag = "triton.cmon.groups"

// cmonMaxGroups is how many groups CMON takes in one tag.
const cmonMaxGroups = 100

// withCMONGroup returns the tag value with group added, and whether it
// had to be: the user's groups stay as they are, in their order, with
// empty entries dropped. A tag holding CMON's maximum of groups already,
// none of them ours, is an error: the group cannot be added without
// dropping one of the user's.
func withCMONGroup(tag, group string) (string, bool, error) {
	var groups []string
	for g := range strings.SplitSeq(tag, ",") {
		if g = strings.TrimSpace(g); g != "" {
			groups = append(groups, g)
		}
	}
	if slices.Contains(groups, group) {
		return tag, false, nil
	}
	if len(groups) >= cmonMaxGroups {
		return tag, false, fmt.Errorf("%s holds %d groups, CMON's most: %s cannot be added without dropping one of them", cmonGroupsTag, len(groups), group)
	}
	return strings.Join(append(groups, group), ","), true, nil
}

// nodeMachines returns the machine UUIDs of the Nodes with a Triton
// providerID, sorted.
func (c *cmonController) nodeMachines() ([]string, error) { return nodeMachineIDs(c.nodes, c.codec) }

// ensureGroups adds the cluster's group to the tag of every node machine
// that lacks it. The machines are read from one list of the account's
// machines when that is cheaper than a GET each (a thousand nodes cost a
// HEAD and a page); a machine gone (404, 410) is skipped. Every machine is
// tried; the errors come back together.
func (c *cmonController) ensureGroups(ctx context.Context) error {
	ids, err := c.nodeMachines()
	if err != nil || len(ids) == 0 {
		return err
	}
	reader := c.reader()
	read, err := reader.readMachines(ctx, ids)
	if err != nil {
		return err
	}
	var errs []error
	for _, id := range ids {
		m, listed := read[id]
		if !listed {
			m, err = reader.machine(ctx, id)
			switch {
			case framework.IsNotFound(err):
				continue
			case err != nil:
				errs = append(errs, err)
				continue
			}
		}
		if m == nil || m.State == machineDeleted {
			continue
		}
		if err := c.tagMachine(ctx, m); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// tagMachine adds the group to m's tag when it lacks it.
func (c *cmonController) tagMachine(ctx context.Context, m *compute.Instance) error {
	tag, _ := m.Tags[cmonGroupsTag].(string)
	next, add, err := withCMONGroup(tag, c.group)
	if err != nil {
		return fmt.Errorf("machine %s: %w", m.ID, err)
	}
	if !add {
		return nil
	}
	klog.FromContext(ctx).V(2).Info("Adding the cluster's CMON group to the machine", "machine", m.ID, "groups", next)
	_, err = one(ctx, "machines.tags.add", func(ctx context.Context) (struct{}, error) {
		return struct{}{}, c.api.Compute().Instances().AddTags(ctx, &compute.AddTagsInput{ID: m.ID, Tags: map[string]string{cmonGroupsTag: next}})
	})
	switch {
	case notFound(err) || machineGone(err):
		return nil
	case err != nil:
		return fmt.Errorf("tagging machine %s with %s=%s: %w", m.ID, cmonGroupsTag, next, err)
	}
	return nil
}

// reader reads machines with the load balancers' readers (lb_resolve.go),
// which use nothing but the CloudAPI client.
func (c *cmonController) reader() *lbDriver { return &lbDriver{api: c.api} }

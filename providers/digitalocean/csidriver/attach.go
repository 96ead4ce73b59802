package csidriver

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"

	"github.com/digitalocean/godo"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ccmkit/ccmkit/framework/csi"
	"github.com/ccmkit/ccmkit/providers/digitalocean/internal/cloud"
)

// Volume action kinds, as the API's action types start.
const (
	kindAttach = "attach"
	kindDetach = "detach"
	kindResize = "resize"

	actionErrored = "errored"
)

// volumeAction is a volume action this controller started and has not
// seen finish. The framework runs one operation per volume at a time, so
// a volume has at most one.
type volumeAction struct {
	kind    string
	id      int
	droplet int    // attach, detach
	name    string // attach: the volume's, for the publish context
	sizeGiB int64  // resize
}

// action returns the action remembered for volume id.
func (p *Driver) action(id string) (volumeAction, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	a, ok := p.actions[id]
	return a, ok
}

func (p *Driver) remember(id string, a volumeAction) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.actions[id] = a
}

// forgetKind forgets the action remembered for volume id if it is of
// kind: the volume's state shows it is over.
func (p *Driver) forgetKind(id, kind string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.actions[id].kind == kind {
		delete(p.actions, id)
	}
}

func (p *Driver) forget(id string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.actions, id)
}

// follow reads action a of volume id (one GET, never a poll): done when it
// completed; csi.ErrPending while it is in progress. An action that
// errored or that the API no longer knows is forgotten: errored is an
// error, unknown is neither done nor an error (the caller looks afresh).
func (p *Driver) follow(ctx context.Context, c *godo.Client, id string, a volumeAction) (done bool, err error) {
	act, _, err := c.StorageActions.Get(ctx, pathID(id), a.id)
	switch {
	case cloud.IsNotFound(err):
		p.forget(id)
		return false, nil
	case err != nil:
		return false, wrapAPI(err, "reading %s action %d of volume %s", a.kind, a.id, id)
	}
	switch act.Status {
	case godo.ActionCompleted:
		p.forget(id)
		return true, nil
	case actionErrored:
		p.forget(id)
		return false, fmt.Errorf("%s action %d of volume %s errored; the next call starts another", a.kind, a.id, id)
	}
	return false, csi.Pending("%s action %d of volume %s is %s", a.kind, a.id, id, act.Status)
}

// started answers for an action the API just accepted: nil when it
// completed at once, else it is remembered for the retry and the answer
// is csi.ErrPending.
func (p *Driver) started(id string, act *godo.Action, a volumeAction) error {
	switch {
	case act == nil:
		// No action in the answer: the retry sees the volume's state.
		return csi.Pending("%s of volume %s accepted", a.kind, id)
	case act.Status == godo.ActionCompleted:
		p.forget(id)
		return nil
	case act.Status == actionErrored:
		p.forget(id)
		return fmt.Errorf("%s action %d of volume %s errored", a.kind, act.ID, id)
	}
	a.id = act.ID
	p.remember(id, a)
	return csi.Pending("%s action %d of volume %s started (%s)", a.kind, act.ID, id, act.Status)
}

// pendingOpposite settles an action of the other kind (a detach while
// attaching, an attach while detaching) this controller started on the
// volume: csi.ErrPending while it runs, done when it completed (the
// volume's state just read is then stale).
func (p *Driver) pendingOpposite(ctx context.Context, c *godo.Client, id, kind string, droplet int) (completed bool, err error) {
	a, ok := p.action(id)
	if !ok || a.kind != kind || a.droplet != droplet {
		return false, nil
	}
	return p.follow(ctx, c, id, a)
}

// parseDropletID is the droplet of a node ID (NodeGetInfo's: the droplet
// ID); anything else is InvalidArgument, as csi-digitalocean answers.
func parseDropletID(node string) (int, error) {
	id, err := strconv.Atoi(node)
	if err != nil || id <= 0 {
		return 0, status.Errorf(codes.InvalidArgument, "node ID %q is not a droplet ID", node)
	}
	return id, nil
}

// publishContext is what the node gets: the volume's name, which names
// its device (csi-digitalocean's <driver name>/volume-name).
func (p *Driver) publishContext(volumeName string) map[string]string {
	return map[string]string{p.Name() + "/volume-name": volumeName}
}

// Attach attaches volume id to the droplet node: the publish context when
// it is attached there (also when it was already);
// csi.ErrAttachedElsewhere when it is attached to another droplet;
// csi.ErrPending while the attach action runs or the droplet has a
// pending event; csi.ErrLimit when the droplet takes no more volumes.
// One GET of the volume and one POST; a retry while the attach runs, one
// GET of its action.
func (p *Driver) Attach(ctx context.Context, id, node string) (map[string]string, error) {
	c, err := p.api()
	if err != nil {
		return nil, err
	}
	droplet, err := parseDropletID(node)
	if err != nil {
		return nil, err
	}
	// The retry of an attach this controller started reads its action
	// only.
	if a, ok := p.action(id); ok && a.kind == kindAttach && a.droplet == droplet {
		done, err := p.follow(ctx, c, id, a)
		if err != nil {
			return nil, err
		}
		if done {
			return p.publishContext(a.name), nil
		}
	}
	vol, _, err := c.Storage.GetVolume(ctx, pathID(id))
	if err != nil {
		return nil, orNotFound(err, "volume %s", id)
	}
	pc := p.publishContext(vol.Name)
	if slices.Contains(vol.DropletIDs, droplet) {
		// Attached, unless a detach this controller started is under way
		// (or has just completed: then it attaches again).
		detached, err := p.pendingOpposite(ctx, c, id, kindDetach, droplet)
		if err != nil {
			return nil, err
		}
		if !detached {
			p.forgetKind(id, kindAttach)
			return pc, nil
		}
	} else if len(vol.DropletIDs) > 0 {
		p.forgetKind(id, kindAttach)
		return nil, fmt.Errorf("volume %s is attached to droplet %d (detach it first): %w", id, vol.DropletIDs[0], csi.ErrAttachedElsewhere)
	}
	if err := p.tagVolume(ctx, c, vol); err != nil {
		return nil, err
	}
	act, _, err := c.StorageActions.Attach(ctx, pathID(id), droplet)
	if err != nil {
		switch {
		case has(err, http.StatusUnprocessableEntity, msgPendingEvent):
			return nil, csi.Pending("droplet %d has a pending event (another volume action)", droplet)
		case has(err, 0, msgAttachLimit):
			return nil, fmt.Errorf("droplet %d: %w (the API: %s)", droplet, csi.ErrLimit, apiMessage(err))
		case has(err, http.StatusUnprocessableEntity, msgAlreadyAttached):
			// Attached since the GET above: the retry sees where.
			return nil, csi.Pending("volume %s was attached meanwhile", id)
		case cloud.IsNotFound(err):
			// The volume was there a moment ago: the droplet is not.
			return nil, &notFoundError{what: fmt.Sprintf("droplet %d", droplet), kind: csi.ErrNodeNotFound, err: err}
		}
		return nil, wrapAPI(err, "attaching volume %s to droplet %d", id, droplet)
	}
	if err := p.started(id, act, volumeAction{kind: kindAttach, droplet: droplet, name: vol.Name}); err != nil {
		return nil, err
	}
	return pc, nil
}

// Detach detaches volume id from the droplet node: nil when it is not
// attached there (anymore, or the droplet is gone); csi.ErrPending while
// the detach action runs or the droplet has a pending event.
func (p *Driver) Detach(ctx context.Context, id, node string) error {
	c, err := p.api()
	if err != nil {
		return err
	}
	droplet, err := parseDropletID(node)
	if err != nil {
		return err
	}
	// The retry of a detach this controller started reads its action
	// only.
	if a, ok := p.action(id); ok && a.kind == kindDetach && a.droplet == droplet {
		done, err := p.follow(ctx, c, id, a)
		if err != nil || done {
			return err
		}
	}
	vol, _, err := c.Storage.GetVolume(ctx, pathID(id))
	if err != nil {
		return orNotFound(err, "volume %s", id)
	}
	if !slices.Contains(vol.DropletIDs, droplet) {
		// Detached, unless an attach this controller started is under
		// way: it has to end before the volume can be detached.
		attached, err := p.pendingOpposite(ctx, c, id, kindAttach, droplet)
		if err != nil {
			return err
		}
		if !attached {
			p.forgetKind(id, kindDetach)
			return nil
		}
	}
	act, _, err := c.StorageActions.DetachByDropletID(ctx, pathID(id), droplet)
	if err != nil {
		switch {
		case has(err, http.StatusUnprocessableEntity, msgNoAttachment), cloud.IsNotFound(err):
			// Not attached there, or the droplet (or volume) is gone.
			p.forgetKind(id, kindDetach)
			return nil
		case has(err, http.StatusUnprocessableEntity, msgPendingEvent):
			return csi.Pending("droplet %d has a pending event (another volume action)", droplet)
		}
		return wrapAPI(err, "detaching volume %s from droplet %d", id, droplet)
	}
	return p.started(id, act, volumeAction{kind: kindDetach, droplet: droplet})
}

// tagVolume puts the configured tag on a volume that lacks it, as
// csi-digitalocean does on attach (volumes created before the tag was
// set, or by hand); a tag the account does not have yet is created.
func (p *Driver) tagVolume(ctx context.Context, c *godo.Client, vol *godo.Volume) error {
	tag := p.cfg.Tag
	if tag == "" || slices.Contains(vol.Tags, tag) {
		return nil
	}
	req := &godo.TagResourcesRequest{Resources: []godo.Resource{{ID: vol.ID, Type: godo.VolumeResourceType}}}
	_, err := c.Tags.TagResources(ctx, tag, req)
	if cloud.IsNotFound(err) {
		if _, _, err = c.Tags.Create(ctx, &godo.TagCreateRequest{Name: tag}); err != nil {
			return wrapAPI(err, "creating tag %s", tag)
		}
		_, err = c.Tags.TagResources(ctx, tag, req)
	}
	if err != nil {
		return wrapAPI(err, "tagging volume %s with %s", vol.ID, tag)
	}
	return nil
}

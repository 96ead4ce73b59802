package dosim

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// Action statuses.
const (
	ActionInProgress = "in-progress"
	ActionCompleted  = "completed"
	ActionErrored    = "errored"
)

// Action is an action as the API serves it (godo.Action's JSON; openapi
// specification/resources/actions/models/action.yml). A volume action's
// resource_id is null (volumes/models/volumeAction.yml): a volume's ID is
// a UUID.
type Action struct {
	ID           int     `json:"id"`
	Status       string  `json:"status"`
	Type         string  `json:"type"`
	StartedAt    string  `json:"started_at"`
	CompletedAt  *string `json:"completed_at"`
	ResourceID   *int    `json:"resource_id"`
	ResourceType string  `json:"resource_type"`
	Region       *Region `json:"region"`
	RegionSlug   string  `json:"region_slug"`

	// droplet is the droplet the action keeps busy: a droplet action's,
	// or the one a volume is attached to or detached from; volume is the
	// volume of a volume action.
	droplet int
	volume  string
}

// dropletActionRequest is the body of POST /v2/droplets/{id}/actions
// (godo's ActionRequest): the type and the parameters some types take.
type dropletActionRequest struct {
	Type string `json:"type"`
	Size string `json:"size"` // resize
	Disk bool   `json:"disk"` // resize
	Name string `json:"name"` // rename, snapshot
}

// dropletActions are the action types the simulator carries out, and
// what each does to the droplet when it completes.
var dropletActions = map[string]func(s *Server, d *Droplet, req dropletActionRequest){
	"power_off":   func(_ *Server, d *Droplet, _ dropletActionRequest) { d.Status = StatusOff },
	"shutdown":    func(_ *Server, d *Droplet, _ dropletActionRequest) { d.Status = StatusOff },
	"power_on":    func(_ *Server, d *Droplet, _ dropletActionRequest) { d.Status = StatusActive },
	"reboot":      func(_ *Server, d *Droplet, _ dropletActionRequest) { d.Status = StatusActive },
	"power_cycle": func(_ *Server, d *Droplet, _ dropletActionRequest) { d.Status = StatusActive },
	"rename":      func(_ *Server, d *Droplet, req dropletActionRequest) { d.Name = req.Name },
	"resize": func(_ *Server, d *Droplet, req dropletActionRequest) {
		d.Size = dropletSize(req.Size)
		d.SizeSlug, d.Memory, d.Vcpus = req.Size, d.Size.Memory, d.Size.Vcpus
		if req.Disk {
			d.Disk = d.Size.Disk
		}
	},
	"snapshot": func(s *Server, d *Droplet, req dropletActionRequest) { s.addDropletSnapshot(d, req.Name) },
	"enable_backups": func(_ *Server, d *Droplet, _ dropletActionRequest) {
		d.Features = withFeature(d.Features, "backups", true)
	},
	"disable_backups": func(_ *Server, d *Droplet, _ dropletActionRequest) {
		d.Features = withFeature(d.Features, "backups", false)
	},
	"password_reset": func(*Server, *Droplet, dropletActionRequest) {},
	"enable_ipv6": func(_ *Server, d *Droplet, _ dropletActionRequest) {
		if len(d.Networks.V6) == 0 {
			d.Networks.V6 = dropletNetworks(d.ID % 1_000_000).V6
			d.Features = withFeature(d.Features, "ipv6", true)
		}
	},
}

// withFeature adds (or removes) feature f.
func withFeature(features []string, f string, on bool) []string {
	features = slices.DeleteFunc(slices.Clone(features), func(x string) bool { return x == f })
	if on {
		features = append(features, f)
	}
	return features
}

// validateDropletAction returns the 422 message for req on d, "" when it
// can start.
func (s *Server) validateDropletAction(d *Droplet, req dropletActionRequest) string {
	if _, ok := dropletActions[req.Type]; !ok {
		known := make([]string, 0, len(dropletActions))
		for t := range dropletActions {
			known = append(known, t)
		}
		slices.Sort(known)
		return fmt.Sprintf("type %q is not one of %v", req.Type, known)
	}
	if s.pendingAction(d.ID) {
		return msgPendingEvent
	}
	switch req.Type {
	case "resize":
		if _, ok := lookupSize(req.Size); !ok {
			return fmt.Sprintf("size %q is not a valid size slug", req.Size)
		}
		// DigitalOcean resizes only a powered-off droplet.
		if d.Status != StatusOff {
			return "Droplet must be powered off before it can be resized."
		}
	case "rename":
		if req.Name == "" {
			return "name is required"
		}
	}
	return ""
}

// pendingAction reports whether droplet id has an action in progress: one
// of its own, or a volume being attached to it or detached from it.
func (s *Server) pendingAction(id int) bool {
	for _, a := range s.st.actions {
		if a.droplet == id && a.Status == ActionInProgress {
			return true
		}
	}
	return false
}

// postDropletAction serves POST /v2/droplets/{id}/actions: 201 with the
// action in progress. It completes, and does what it does to the droplet,
// on its Options.ProvisioningReads-th read (GET /v2/actions/{id} or the
// droplet's action), on Advance, or SettleAfter after it started.
func (s *Server) postDropletAction(r *http.Request) (int, any) {
	id, err := strconv.Atoi(r.PathValue("id"))
	d, ok := s.st.droplets[id]
	if err != nil || !ok {
		return notFound()
	}
	var req dropletActionRequest
	if err := simkit.Decode(r, &req); err != nil {
		return badJSON(err)
	}
	if msg := s.validateDropletAction(d, req); msg != "" {
		return unprocessable("%s", msg)
	}
	st := s.st
	reg := d.Region
	a := &Action{
		ID: st.nextAction, Status: ActionInProgress, Type: req.Type, StartedAt: st.now().UTC().Format(time.RFC3339),
		ResourceID: &id, ResourceType: "droplet", Region: &reg, RegionSlug: reg.Slug, droplet: id,
	}
	st.nextAction++
	st.actions[a.ID] = a
	st.actionOrder = append(st.actionOrder, a.ID)
	st.acting.Start(actionKey(a.ID), func() {
		if d, ok := st.droplets[id]; ok {
			dropletActions[req.Type](s, d, req)
		}
		s.finishAction(a, ActionCompleted)
	})
	return http.StatusCreated, map[string]any{"action": a.clone()}
}

func actionKey(id int) string { return strconv.Itoa(id) }

func (s *Server) finishAction(a *Action, status string) {
	done := s.st.now().UTC().Format(time.RFC3339)
	a.Status, a.CompletedAt = status, &done
}

// abortActions ends the unfinished actions of a deleted droplet errored,
// volume attachments to it or detachments from it included. The caller
// holds s.mu.
func (s *Server) abortActions(dropletID int) {
	for _, a := range s.st.actions {
		if a.droplet == dropletID && a.Status == ActionInProgress {
			s.st.acting.Stop(actionKey(a.ID))
			s.finishAction(a, ActionErrored)
		}
	}
}

func (a *Action) clone() Action {
	c := *a
	if a.Region != nil {
		r := *a.Region
		r.Sizes, r.Features = slices.Clone(r.Sizes), slices.Clone(r.Features)
		c.Region = &r
	}
	if a.CompletedAt != nil {
		t := *a.CompletedAt
		c.CompletedAt = &t
	}
	if a.ResourceID != nil {
		id := *a.ResourceID
		c.ResourceID = &id
	}
	return c
}

// readAction counts a read of action id and returns it, nil when there is
// none.
func (s *Server) readAction(id int) *Action {
	a, ok := s.st.actions[id]
	if !ok {
		return nil
	}
	s.st.acting.Read(actionKey(id))
	c := a.clone()
	return &c
}

// getAction serves GET /v2/actions/{action}.
func (s *Server) getAction(r *http.Request) (int, any) {
	id, err := strconv.Atoi(r.PathValue("action"))
	if err != nil {
		return notFound()
	}
	a := s.readAction(id)
	if a == nil {
		return notFound()
	}
	return http.StatusOK, map[string]any{"action": a}
}

// getDropletAction serves GET /v2/droplets/{id}/actions/{action}: 404 for
// an action of another droplet.
func (s *Server) getDropletAction(r *http.Request) (int, any) {
	droplet, err1 := strconv.Atoi(r.PathValue("id"))
	id, err2 := strconv.Atoi(r.PathValue("action"))
	if err1 != nil || err2 != nil {
		return notFound()
	}
	if a, ok := s.st.actions[id]; !ok || a.ResourceType != "droplet" || a.droplet != droplet {
		return notFound()
	}
	return http.StatusOK, map[string]any{"action": s.readAction(id)}
}

// listActions serves GET /v2/actions, newest first, paginated.
func (s *Server) listActions(r *http.Request) (int, any) {
	return s.actionList(r, func(*Action) bool { return true })
}

// listDropletActions serves GET /v2/droplets/{id}/actions.
func (s *Server) listDropletActions(r *http.Request) (int, any) {
	id, err := strconv.Atoi(r.PathValue("id"))
	if _, ok := s.st.droplets[id]; err != nil || !ok {
		return notFound()
	}
	return s.actionList(r, func(a *Action) bool { return a.ResourceType == "droplet" && a.droplet == id })
}

func (s *Server) actionList(r *http.Request, keep func(*Action) bool) (int, any) {
	var out []Action
	for _, id := range slices.Backward(s.st.actionOrder) {
		if a := s.st.actions[id]; keep(a) {
			out = append(out, a.clone())
		}
	}
	return list(r, "actions", out, s.opts.PerPage)
}

// Actions returns the actions, oldest first, without counting as reads.
func (s *Server) Actions() []Action {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Action, 0, len(s.st.actionOrder))
	for _, id := range s.st.actionOrder {
		out = append(out, s.st.actions[id].clone())
	}
	return out
}

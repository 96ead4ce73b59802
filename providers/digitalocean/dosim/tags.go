package dosim

import (
	"net/http"
	"regexp"
	"slices"
	"strconv"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// validTag is the API's tag name syntax.
var validTag = regexp.MustCompile(`^[a-zA-Z0-9_\-:]{1,255}$`)

// tagJSON is a tag as the API serves it.
type tagJSON struct {
	Name      string         `json:"name"`
	Resources map[string]any `json:"resources"`
}

func (s *Server) tagJSON(name string) tagJSON {
	droplets, lbs := 0, 0
	for _, d := range s.st.droplets {
		if slices.Contains(d.Tags, name) {
			droplets++
		}
	}
	for _, rec := range s.st.lbs {
		if slices.Contains(rec.lb.Tags, name) {
			lbs++
		}
	}
	volumes, snaps := 0, 0
	for _, v := range s.st.volumes.All() {
		if slices.Contains(v.Tags, name) {
			volumes++
		}
	}
	for _, sn := range s.st.snapshots.All() {
		if sn.ResourceType == "volume" && slices.Contains(sn.Tags, name) {
			snaps++
		}
	}
	return tagJSON{Name: name, Resources: map[string]any{
		"count":            droplets + lbs + volumes + snaps,
		"droplets":         map[string]any{"count": droplets},
		"load_balancers":   map[string]any{"count": lbs},
		"volumes":          map[string]any{"count": volumes},
		"volume_snapshots": map[string]any{"count": snaps},
	}}
}

func (s *Server) listTags(r *http.Request) (int, any) {
	tags := []tagJSON{}
	for _, name := range s.st.tagList() {
		tags = append(tags, s.tagJSON(name))
	}
	return list(r, "tags", tags, s.opts.PerPage)
}

// createTag serves POST /v2/tags; creating an existing tag returns it.
func (s *Server) createTag(r *http.Request) (int, any) {
	var req struct {
		Name string `json:"name"`
	}
	if err := simkit.Decode(r, &req); err != nil {
		return badJSON(err)
	}
	if !validTag.MatchString(req.Name) {
		return unprocessable("name must be 1 to 255 letters, digits, '_', '-' or ':'")
	}
	s.st.tags[req.Name] = true
	return http.StatusCreated, map[string]any{"tag": s.tagJSON(req.Name)}
}

func (s *Server) getTag(r *http.Request) (int, any) {
	name := r.PathValue("name")
	if !s.st.tags[name] {
		return notFound()
	}
	return http.StatusOK, map[string]any{"tag": s.tagJSON(name)}
}

// deleteTag serves DELETE /v2/tags/{name}, untagging every resource.
func (s *Server) deleteTag(r *http.Request) (int, any) {
	name := r.PathValue("name")
	if !s.st.tags[name] {
		return notFound()
	}
	delete(s.st.tags, name)
	for _, d := range s.st.droplets {
		d.Tags = slices.DeleteFunc(d.Tags, func(t string) bool { return t == name })
	}
	for _, rec := range s.st.lbs {
		rec.lb.Tags = slices.DeleteFunc(rec.lb.Tags, func(t string) bool { return t == name })
	}
	for _, v := range s.st.volumes.All() {
		v.Tags = slices.DeleteFunc(v.Tags, func(t string) bool { return t == name })
	}
	for _, sn := range s.st.snapshots.All() {
		sn.Tags = slices.DeleteFunc(sn.Tags, func(t string) bool { return t == name })
	}
	return http.StatusNoContent, nil
}

type tagResourcesRequest struct {
	Resources []struct {
		ID   string `json:"resource_id"`
		Type string `json:"resource_type"`
	} `json:"resources"`
}

func (s *Server) tagResources(r *http.Request) (int, any) { return s.retag(r, true) }

func (s *Server) untagResources(r *http.Request) (int, any) { return s.retag(r, false) }

// retag adds (or removes) the tag to (from) droplets, load balancers,
// volumes and volume snapshots (godo's resource types "volume" and
// "volume_snapshot").
// Every resource is checked before any changes.
func (s *Server) retag(r *http.Request, add bool) (int, any) {
	name := r.PathValue("name")
	if !s.st.tags[name] {
		return notFound()
	}
	var req tagResourcesRequest
	if err := simkit.Decode(r, &req); err != nil {
		return badJSON(err)
	}
	if len(req.Resources) == 0 {
		return unprocessable("resources is required")
	}
	var targets []*[]string
	for _, res := range req.Resources {
		switch res.Type {
		case "droplet":
			id, err := strconv.Atoi(res.ID)
			d, ok := s.st.droplets[id]
			if err != nil || !ok {
				return unprocessable("droplet %s does not exist", res.ID)
			}
			targets = append(targets, &d.Tags)
		case "load_balancer":
			rec, ok := s.st.lbs[res.ID]
			if !ok {
				return unprocessable("load_balancer %s does not exist", res.ID)
			}
			targets = append(targets, &rec.lb.Tags)
		case "volume":
			v, ok := s.st.volumes.Get(res.ID)
			if !ok {
				return unprocessable("volume %s does not exist", res.ID)
			}
			targets = append(targets, &v.Tags)
		case "volume_snapshot":
			sn, ok := s.st.snapshots.Get(res.ID)
			if !ok || sn.ResourceType != "volume" {
				return unprocessable("volume_snapshot %s does not exist", res.ID)
			}
			targets = append(targets, &sn.Tags)
		default:
			return unprocessable("resource_type %q is not supported", res.Type)
		}
	}
	for _, tags := range targets {
		has := slices.Contains(*tags, name)
		switch {
		case add && !has:
			*tags = append(*tags, name)
		case !add && has:
			*tags = slices.DeleteFunc(*tags, func(t string) bool { return t == name })
		}
	}
	return http.StatusNoContent, nil
}

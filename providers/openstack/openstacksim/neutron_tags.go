package openstacksim

import (
	"net/http"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// Neutron's tag limits (neutron.extensions.tagging).
const (
	maxTags   = 50
	maxTagLen = 255
)

// taggedRef is the resource of a tag request: what errors call it, and
// its attributes.
type taggedRef struct {
	kind string
	*TaggedAttributes
}

// tagged finds the resource of a tag request, in one of the taggable
// collections.
func (s *Server) tagged(r *http.Request) (taggedRef, *response) {
	c, known := taggable[r.PathValue("collection")]
	if !known {
		resp := neutronError(http.StatusNotFound, "HTTPNotFound", "The resource could not be found.")
		return taggedRef{}, &resp
	}
	attrs, found := c.find(s.st, r.PathValue("id"))
	if !found {
		resp := neutronNotFound(c.kind, r.PathValue("id"))
		return taggedRef{}, &resp
	}
	return taggedRef{c.kind, attrs}, nil
}

// set replaces the tags, moving the revision on as any change to a
// standard attribute does.
func (t taggedRef) set(tags []string) {
	t.Tags = tags
	t.revise()
}

func (s *Server) neutronTagRoutes() {
	base := networkV2 + "/{collection}/{id}/tags"
	s.Handle("GET "+base, s.listTags)
	s.Handle("PUT "+base, s.replaceTags)
	s.Handle("DELETE "+base, s.deleteTags)
	s.Handle("GET "+base+"/{tag}", s.checkTag)
	s.Handle("PUT "+base+"/{tag}", s.addTag)
	s.Handle("DELETE "+base+"/{tag}", s.deleteTag)
}

func (s *Server) listTags(r *http.Request) response {
	t, errResp := s.tagged(r)
	if errResp != nil {
		return *errResp
	}
	return jsonOK(map[string]any{"tags": nonNil(t.Tags)})
}

// replaceTags is PUT …/tags {"tags": […]}: 200 with the new set.
func (s *Server) replaceTags(r *http.Request) response {
	t, errResp := s.tagged(r)
	if errResp != nil {
		return *errResp
	}
	var body struct {
		Tags *[]string `json:"tags"`
	}
	if err := simkit.Decode(r, &body); err != nil || body.Tags == nil {
		return neutronBadRequest("Invalid input for tags. Reason: a body {\"tags\": [...]} is required.")
	}
	tags := []string{}
	for _, tag := range *body.Tags {
		if msg := validTag(tag); msg != "" {
			return neutronBadRequest("Invalid input for tags. Reason: %s", msg)
		}
		if !slices.Contains(tags, tag) {
			tags = append(tags, tag)
		}
	}
	if len(tags) > maxTags {
		return neutronBadRequest("Invalid input for tags. Reason: '%d' exceeds the maximum number of tags, %d.", len(tags), maxTags)
	}
	t.set(tags)
	return jsonOK(map[string]any{"tags": tags})
}

func (s *Server) deleteTags(r *http.Request) response {
	t, errResp := s.tagged(r)
	if errResp != nil {
		return *errResp
	}
	t.set([]string{})
	return noContent()
}

// checkTag is 204 when the resource has the tag, 404 TagNotFound if not.
func (s *Server) checkTag(r *http.Request) response {
	t, errResp := s.tagged(r)
	if errResp != nil {
		return *errResp
	}
	if !slices.Contains(t.Tags, r.PathValue("tag")) {
		return tagNotFound(r, t)
	}
	return noContent()
}

// addTag is PUT …/tags/{tag}: 201, also when the tag is there already.
func (s *Server) addTag(r *http.Request) response {
	t, errResp := s.tagged(r)
	if errResp != nil {
		return *errResp
	}
	tag := r.PathValue("tag")
	if msg := validTag(tag); msg != "" {
		return neutronBadRequest("Invalid input for tag. Reason: %s", msg)
	}
	if !slices.Contains(t.Tags, tag) {
		if len(t.Tags) >= maxTags {
			return neutronBadRequest("Invalid input for tags. Reason: the maximum number of tags, %d, is reached.", maxTags)
		}
		t.set(append(slices.Clone(t.Tags), tag))
	}
	return simkit.NoContent(http.StatusCreated)
}

func (s *Server) deleteTag(r *http.Request) response {
	t, errResp := s.tagged(r)
	if errResp != nil {
		return *errResp
	}
	i := slices.Index(t.Tags, r.PathValue("tag"))
	if i < 0 {
		return tagNotFound(r, t)
	}
	t.set(slices.Delete(slices.Clone(t.Tags), i, i+1))
	return noContent()
}

func tagNotFound(r *http.Request, t taggedRef) response {
	return neutronError(http.StatusNotFound, "TagNotFound", "Tag %s could not be found for %s %s.",
		r.PathValue("tag"), strings.ToLower(strings.ReplaceAll(t.kind, " ", "")), r.PathValue("id"))
}

// validTag is "" for a valid tag, else why it is not one.
func validTag(tag string) string {
	switch {
	case tag == "":
		return "'' is not a valid tag: it is empty"
	case utf8.RuneCountInString(tag) > maxTagLen:
		return "'" + tag + "' exceeds maximum length of 255"
	}
	return ""
}

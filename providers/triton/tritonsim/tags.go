package tritonsim

import (
	"fmt"
	"maps"
	"net/http"
	"regexp"
	"strings"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// cmonGroups is triton.cmon.groups: a comma list of groups of
// [A-Za-z0-9_-], at most 100 of at most 100 characters.
var cmonGroup = regexp.MustCompile(`^[A-Za-z0-9_-]{1,100}$`)

// specialTags are the triton.* tags VMAPI accepts (node-triton-tags
// typeFromKey) and the JSON type each must have.
var specialTags = map[string]string{
	TagCNSServices:          "string",
	TagCNSDisable:           "boolean",
	TagCNSReversePTR:        "string",
	"triton.cmon.groups":    "string",
	"triton.network.public": "string",
}

// validateTags checks tag values as VMAPI does: strings, numbers or
// booleans; the triton.* tags it knows with their types and grammars,
// any other triton.* tag refused.
func validateTags(tags map[string]any) error {
	for _, k := range sortedKeys(tags) {
		v := tags[k]
		switch v.(type) {
		case string, bool, float64:
		default:
			return fmt.Errorf("tag %q: value must be a string, number or boolean, not %T", k, v)
		}
		if !strings.HasPrefix(k, "triton.") {
			continue
		}
		typ, known := specialTags[k]
		if !known {
			return tagError(fmt.Sprintf("Unrecognized special triton tag %q", k))
		}
		if err := checkSpecialTag(k, typ, v); err != nil {
			return err
		}
	}
	return nil
}

func checkSpecialTag(k, typ string, v any) error {
	if _, isBool := v.(bool); typ == "boolean" && !isBool {
		return tagError(fmt.Sprintf("Triton tag %q value must be a boolean: %#v", k, v))
	}
	s, isString := v.(string)
	if typ == "string" && !isString {
		return tagError(fmt.Sprintf("Triton tag %q value must be a string: %#v", k, v))
	}
	switch k {
	case TagCNSServices:
		if _, err := parseServices(s); err != nil {
			return tagError(fmt.Sprintf("Triton tag %q value is invalid: %v", k, err))
		}
	case "triton.cmon.groups":
		groups := strings.Split(s, ",")
		for _, g := range groups {
			if !cmonGroup.MatchString(g) || len(groups) > 100 {
				return tagError(fmt.Sprintf("Triton tag %q value is invalid: %q", k, s))
			}
		}
	}
	return nil
}

// tagError is VMAPI's message for a tag it refuses, worded as VMAPI words
// it (node-triton-tags).
type tagError string

func (e tagError) Error() string { return string(e) }

// decodeTags reads a flat tags map from the body.
func decodeTags(r *http.Request) (map[string]any, *simkit.Response) {
	tags := map[string]any{}
	if fail := decode(r, &tags); fail != nil {
		return nil, fail
	}
	return tags, nil
}

// addTags serves AddMachineTags (POST): the body's tags merged into the
// machine's; answers with all of them.
func (s *Server) addTags(r *http.Request) simkit.Response {
	return s.writeTags(r, false)
}

// replaceTags serves ReplaceMachineTags (PUT): the body's tags replace
// the machine's; answers with them.
func (s *Server) replaceTags(r *http.Request) simkit.Response {
	return s.writeTags(r, true)
}

func (s *Server) writeTags(r *http.Request, replace bool) simkit.Response {
	m, fail := s.liveMachine(r)
	if fail != nil {
		return *fail
	}
	tags, fail := decodeTags(r)
	if fail != nil {
		return *fail
	}
	next := tags
	if !replace {
		next = cloneMap(m.Tags)
		maps.Copy(next, tags)
	}
	if err := validateTags(next); err != nil {
		return validationFailed("%s", err.Error())
	}
	// VMAPI's setMetadata removes the keys the new tags leave out: a
	// replace that removes one is replace_tags, else set_tags.
	action := auditSetTags
	for k := range m.Tags {
		if _, kept := next[k]; !kept {
			action = auditReplaceTags
		}
	}
	m.Tags = next
	s.st.touch(m)
	s.st.job(m.ID, action, callerOf(r))
	return ok(cloneMap(m.Tags))
}

// SetTags merges tags into a machine's (nil values remove keys), without
// the API's validation: a test seeding what the API would refuse.
func (s *Server) SetTags(id string, tags map[string]any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if m, found := s.st.machines.Get(id); found {
		for k, v := range tags {
			if v == nil {
				delete(m.Tags, k)
			} else {
				m.Tags[k] = v
			}
		}
		s.st.touch(m)
	}
}

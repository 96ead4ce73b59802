package openstacksim

import (
	"cmp"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// Glance's list limits: limit_param_default and api_limit_max.
const (
	glanceDefaultLimit = 25
	glanceMaxLimit     = 1000
)

// imageSortKeys are the attributes Glance sorts by.
var imageSortKeys = []string{
	"name", "status", "container_format", "disk_format", "size", "id", "created_at", "updated_at",
	"visibility", "min_disk", "min_ram", "owner", "os_hidden", "protected", "virtual_size",
}

// listImages is GET /v2/images: the images the project may see (public,
// its own and, with visibility=community or all, community ones), filtered
// by attribute or property, sorted (created_at then id, newest first,
// unless sort_key/sort_dir or sort say otherwise) and paged with limit and
// marker; a full page has a relative next link, as Glance gives.
func (s *Server) listImages(r *http.Request) response {
	q := r.URL.Query()
	limit, errResp := imageLimit(q)
	if errResp != nil {
		return *errResp
	}
	keys, errResp := imageSort(q)
	if errResp != nil {
		return *errResp
	}
	project := s.tokenProject(r)
	items := []map[string]any{}
	for _, img := range s.st.images.All() {
		if !img.visibleTo(project) {
			continue
		}
		v := imageJSON(img)
		if imageMatches(q, v, img.Owner == project) {
			items = append(items, v)
		}
	}
	slices.SortStableFunc(items, func(a, b map[string]any) int {
		for _, k := range keys {
			if c := compareAttr(a[k.attr], b[k.attr]); c != 0 {
				if k.desc {
					return -c
				}
				return c
			}
		}
		return 0
	})
	start := 0
	if m := q.Get("marker"); m != "" {
		i := slices.IndexFunc(items, func(v map[string]any) bool { return v["id"] == m })
		if i < 0 {
			return glanceError(http.StatusBadRequest, "No image found with ID %s", m)
		}
		start = i + 1
	}
	page := items[start:min(start+limit, len(items))]
	body := map[string]any{"images": page, "schema": "/v2/schemas/images", "first": imagesURL(q, "")}
	if len(page) > 0 && len(page) == limit {
		body["next"] = imagesURL(q, page[len(page)-1]["id"].(string))
	}
	return jsonOK(body)
}

// imagesURL is the relative URL of a page of the list q asked for,
// after marker ("" for the first page).
func imagesURL(q url.Values, marker string) string {
	p := url.Values{}
	for k, v := range q {
		p[k] = v
	}
	p.Del("marker")
	if marker != "" {
		p.Set("marker", marker)
	}
	if len(p) == 0 {
		return "/v2/images"
	}
	return "/v2/images?" + p.Encode()
}

func imageLimit(q url.Values) (int, *response) {
	v := q.Get("limit")
	if v == "" {
		return glanceDefaultLimit, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		resp := glanceError(http.StatusBadRequest, "limit param must be an integer")
		return 0, &resp
	}
	if n < 0 {
		resp := glanceError(http.StatusBadRequest, "limit param must be positive")
		return 0, &resp
	}
	return min(n, glanceMaxLimit), nil
}

type sortKey struct {
	attr string
	desc bool
}

// imageSort reads sort_key/sort_dir (repeatable) or sort=key[:dir],…;
// id is always the last key, as Glance appends it.
func imageSort(q url.Values) ([]sortKey, *response) {
	bad := func(format string, args ...any) ([]sortKey, *response) {
		resp := glanceError(http.StatusBadRequest, format, args...)
		return nil, &resp
	}
	var keys []sortKey
	if v := q.Get("sort"); v != "" {
		if len(q["sort_key"]) > 0 || len(q["sort_dir"]) > 0 {
			return bad("The 'sort' parameter cannot be combined with sort_key or sort_dir.")
		}
		for part := range strings.SplitSeq(v, ",") {
			attr, dir, _ := strings.Cut(strings.TrimSpace(part), ":")
			keys = append(keys, sortKey{attr, dir == "desc"})
			if dir != "" && dir != "asc" && dir != "desc" {
				return bad("Invalid sort direction: %s", dir)
			}
		}
	} else {
		dirs := q["sort_dir"]
		for i, attr := range q["sort_key"] {
			dir := "desc"
			if i < len(dirs) {
				dir = dirs[i]
			} else if len(dirs) > 0 {
				dir = dirs[len(dirs)-1]
			}
			if dir != "asc" && dir != "desc" {
				return bad("Invalid sort direction: %s", dir)
			}
			keys = append(keys, sortKey{attr, dir == "desc"})
		}
		if len(keys) == 0 {
			keys = []sortKey{{"created_at", true}}
		}
	}
	for _, k := range keys {
		if !slices.Contains(imageSortKeys, k.attr) {
			return bad("Invalid sort key: %s. It must be one of the following: %s.", k.attr, strings.Join(imageSortKeys, ", "))
		}
	}
	if !slices.ContainsFunc(keys, func(k sortKey) bool { return k.attr == "id" }) {
		keys = append(keys, sortKey{"id", keys[len(keys)-1].desc})
	}
	return keys, nil
}

// imageMatches applies Glance's list filters to an image's view: the
// visibility filter (by default every visibility but other projects'
// community images), os_hidden (false unless asked), tag (every one),
// name/id/status/… with an optional "in:a,b" list, and any other
// parameter as a property filter.
func imageMatches(q url.Values, v map[string]any, own bool) bool {
	switch vis := q.Get("visibility"); vis {
	case "", "all":
		if vis == "" && v["visibility"] == "community" && !own {
			return false
		}
	default:
		if v["visibility"] != vis {
			return false
		}
	}
	if hidden := q.Get("os_hidden"); fmt.Sprint(v["os_hidden"]) != cmp.Or(strings.ToLower(hidden), "false") {
		return false
	}
	for _, t := range q["tag"] {
		if !slices.Contains(v["tags"].([]string), t) {
			return false
		}
	}
	for key, want := range q {
		switch key {
		case "limit", "marker", "sort", "sort_key", "sort_dir", "visibility", "os_hidden", "tag", "member_status":
			continue
		}
		have := fmt.Sprint(v[key])
		if _, known := v[key]; !known {
			return false
		}
		w := want[len(want)-1]
		if list, ok := strings.CutPrefix(w, "in:"); ok {
			if !slices.Contains(strings.Split(list, ","), have) {
				return false
			}
		} else if have != w {
			return false
		}
	}
	return true
}

// compareAttr orders two attribute values of the same kind.
func compareAttr(a, b any) int {
	switch x := a.(type) {
	case int:
		y, _ := b.(int)
		return cmp.Compare(x, y)
	case bool:
		y, _ := b.(bool)
		return cmp.Compare(strconv.FormatBool(x), strconv.FormatBool(y))
	}
	return cmp.Compare(fmt.Sprint(a), fmt.Sprint(b))
}

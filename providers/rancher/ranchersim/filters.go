package ranchersim

import (
	"encoding/json"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Filters follow Cattle's ParseCollectionAttributes.parseFilters
// (code/framework/java-server/.../gdapi/request/handler/
// ParseCollectionAttributes.java, Cattle v0.183, Rancher 1.6) and
// JooqUtils.toConditions: a query key is split at its LAST underscore
// into a field name and a modifier ("removed_null" is removed + null; a
// key without one is the field, eq). The key counts only when the name
// is one of the type's collectionFilters and the modifier one of that
// filter's modifiers; any other key is ignored: "external_id" is the
// field "external" with the modifier "id", and filters nothing. The
// conditions of one field all hold (SQL AND): state_ne=a&state_ne=b
// keeps neither, name=a&name=b matches nothing unless a is b. A null
// field matches null and nothing else, as in SQL.

// filter is one condition of a list request: field, modifier, values
// (every one must hold).
type filter struct {
	field, modifier string
	values          []string
}

// collectionParams are the query parameters that are not filters.
var collectionParams = []string{"limit", "marker", "sort", "order", "include"}

// parseFilters reads a list request's filters on the fields the type
// filters by (its schema's collectionFilters), as Cattle does.
func parseFilters(r *http.Request, fields []string) []filter {
	var out []filter
	for key, vals := range r.URL.Query() {
		if slices.Contains(collectionParams, key) {
			continue
		}
		name, modifier := key, "eq"
		if i := strings.LastIndex(key, "_"); i >= 0 {
			name, modifier = key[:i], key[i+1:]
		}
		if !slices.Contains(fields, name) || !slices.Contains(filterModifiers(name), modifier) {
			continue
		}
		out = append(out, filter{field: name, modifier: modifier, values: vals})
	}
	slices.SortFunc(out, func(a, b filter) int { return strings.Compare(a.field+"_"+a.modifier, b.field+"_"+b.modifier) })
	return out
}

// matches reports whether doc (a resource as JSON fields) passes every
// filter.
func matches(doc map[string]any, filters []filter) bool {
	for _, f := range filters {
		if !f.matches(doc[f.field]) {
			return false
		}
	}
	return true
}

func (f filter) matches(v any) bool {
	s, isNull := scalar(v)
	switch f.modifier {
	case "null":
		return isNull
	case "notnull":
		return !isNull
	}
	if isNull {
		return false
	}
	for _, want := range f.values {
		var ok bool
		switch f.modifier {
		case "ne":
			ok = s != want
		case "prefix":
			ok = strings.HasPrefix(s, want)
		case "like":
			ok = like(want).MatchString(s)
		case "notlike":
			ok = !like(want).MatchString(s)
		case "lt", "lte", "gt", "gte":
			ok = compare(s, want, f.modifier)
		default:
			ok = s == want
		}
		if !ok {
			return false
		}
	}
	return true
}

// scalar is a field's value as a filter compares it; null (and "") is
// isNull.
func scalar(v any) (s string, isNull bool) {
	switch v := v.(type) {
	case nil:
		return "", true
	case string:
		return v, v == ""
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64), false
	case bool:
		return strconv.FormatBool(v), false
	default:
		b, _ := json.Marshal(v)
		return string(b), false
	}
}

// like compiles an SQL LIKE pattern: % any run, _ any character.
func like(pattern string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString("^")
	for _, r := range pattern {
		switch r {
		case '%':
			b.WriteString(".*")
		case '_':
			b.WriteString(".")
		default:
			b.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	b.WriteString("$")
	return regexp.MustCompile(b.String())
}

// compare orders numbers as numbers, anything else as strings.
func compare(got, want, modifier string) bool {
	c := compareValues(got, want)
	switch modifier {
	case "lt":
		return c < 0
	case "lte":
		return c <= 0
	case "gt":
		return c > 0
	default:
		return c >= 0
	}
}

// compareValues orders two field values: numerically when both are
// numbers, else as strings.
func compareValues(a, b string) int {
	if x, err1 := strconv.ParseFloat(a, 64); err1 == nil {
		if y, err2 := strconv.ParseFloat(b, 64); err2 == nil {
			switch {
			case x < y:
				return -1
			case x > y:
				return 1
			}
			return 0
		}
	}
	return strings.Compare(a, b)
}

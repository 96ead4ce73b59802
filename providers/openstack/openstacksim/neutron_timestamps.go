package openstacksim

import (
	"fmt"
	"net/url"
	"time"
)

// changedSince keeps the items updated at or after the changed_since
// query parameter, the filter the standard-attr-timestamp extension adds.
func changedSince(q url.Values, items []map[string]any) ([]map[string]any, error) {
	v := q.Get("changed_since")
	if v == "" {
		return items, nil
	}
	since, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return nil, fmt.Errorf("Failed to parse request. Parameter 'changed_since' has invalid value '%s'", v) //nolint:staticcheck // the service's own message
	}
	var out []map[string]any
	for _, m := range items {
		s, _ := m["updated_at"].(string)
		if t, err := time.Parse(time.RFC3339, s); err == nil && !t.Before(since) {
			out = append(out, m)
		}
	}
	return out, nil
}

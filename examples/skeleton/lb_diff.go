package skeleton

import (
	"fmt"
	"slices"

	"github.com/ccmkit/ccmkit/framework/reconcile"
)

// This file compares the load balancer a Service asks for (lb_desired.go)
// with the one the cloud has: the driver's Update writes only when they
// differ.

func listenerKey(l listener) string { return fmt.Sprintf("%s:%05d", l.Protocol, l.Port) }

// specChanges names what differs between the load balancer's spec and the
// desired one; none means no write is needed. Listeners are keyed by
// protocol and port and members by instance ID, so order never counts as a
// change.
func specChanges(have, want *lbSpec) []string {
	var changes []string
	if !sameItems(want.Listeners, have.Listeners, listenerKey) {
		changes = append(changes, "listeners")
	}
	if !sameItems(want.Members, have.Members, func(id string) string { return id }) {
		changes = append(changes, "members")
	}
	scalars := []struct {
		name string
		same bool
	}{
		{"name", have.Name == want.Name},
		{"algorithm", have.Algorithm == want.Algorithm},
		{"health check", have.HealthCheck == want.HealthCheck},
		{"proxy protocol", have.ProxyProtocol == want.ProxyProtocol},
		{"tags", slices.Equal(have.Tags, want.Tags)},
	}
	for _, s := range scalars {
		if !s.same {
			changes = append(changes, s.name)
		}
	}
	return changes
}

// sameItems reports whether want and have hold equal items under the same
// keys. Duplicate keys (a cloud that stored a member twice) count as a
// difference, which the next full PUT repairs.
func sameItems[T any](want, have []T, key func(T) string) bool {
	plan, err := reconcile.Diff(want, have, key, nil)
	return err == nil && plan.Empty()
}

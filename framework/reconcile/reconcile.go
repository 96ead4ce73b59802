// Package reconcile computes what to change to turn the actual state of a set
// of cloud resources into the desired one.
//
// [Diff] matches desired and actual items by key, such as listeners keyed by
// protocol and port or pool members keyed by instance and port, and returns a
// [Plan]. Applying only the plan's writes is what makes a second
// EnsureLoadBalancer with nothing changed cost zero cloud writes.
package reconcile

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	gocmp "github.com/google/go-cmp/cmp"
)

// ErrDuplicateKey is wrapped by Diff errors for an input with two items of the
// same key.
var ErrDuplicateKey = errors.New("duplicate key")

// Plan is the difference between a desired and an actual set of items. Every
// slice is sorted by key.
type Plan[T any] struct {
	Create    []T         // in desired, not in actual
	Update    []Change[T] // in both, not equal
	Delete    []T         // in actual, not in desired
	Unchanged []T         // in both and equal; the actual items
}

// Change is an item present in both sets whose desired and actual values
// differ.
type Change[T any] struct{ Desired, Actual T }

// Empty reports whether the plan has nothing to create, update or delete.
func (p Plan[T]) Empty() bool { return p.Writes() == 0 }

// Writes returns the number of items to create, update or delete.
func (p Plan[T]) Writes() int { return len(p.Create) + len(p.Update) + len(p.Delete) }

// Diff matches desired and actual items by key and returns the plan that turns
// actual into desired. Items present in both are compared with equal, which
// receives the desired item first; a nil equal compares with go-cmp's
// [gocmp.Equal], which panics on unexported fields, so such types need an
// equal function. Unchanged holds the actual items, as they carry what the
// cloud assigned (IDs, status) and a custom equal typically ignores.
//
// Every slice of the plan is sorted by key, so the plan does not depend on
// the order of the inputs. Two items with the same key in desired, or in
// actual, are an error wrapping [ErrDuplicateKey] that names the key.
func Diff[T any, K cmp.Ordered](desired, actual []T, key func(T) K, equal func(desired, actual T) bool) (Plan[T], error) {
	if equal == nil {
		equal = func(d, a T) bool { return gocmp.Equal(d, a) }
	}
	want, err := sortByKey(desired, key, "desired")
	if err != nil {
		return Plan[T]{}, err
	}
	have, err := sortByKey(actual, key, "actual")
	if err != nil {
		return Plan[T]{}, err
	}

	// Merge the two sorted lists.
	var p Plan[T]
	i, j := 0, 0
	for i < len(want) && j < len(have) {
		switch c := cmp.Compare(want[i].key, have[j].key); {
		case c < 0:
			p.Create = append(p.Create, want[i].item)
			i++
		case c > 0:
			p.Delete = append(p.Delete, have[j].item)
			j++
		default:
			if equal(want[i].item, have[j].item) {
				p.Unchanged = append(p.Unchanged, have[j].item)
			} else {
				p.Update = append(p.Update, Change[T]{Desired: want[i].item, Actual: have[j].item})
			}
			i++
			j++
		}
	}
	for ; i < len(want); i++ {
		p.Create = append(p.Create, want[i].item)
	}
	for ; j < len(have); j++ {
		p.Delete = append(p.Delete, have[j].item)
	}
	return p, nil
}

type keyed[T any, K cmp.Ordered] struct {
	key  K
	item T
}

// sortByKey returns items with their keys, sorted by key. It fails on the
// smallest duplicate key, so the error does not depend on the input order.
func sortByKey[T any, K cmp.Ordered](items []T, key func(T) K, set string) ([]keyed[T, K], error) {
	out := make([]keyed[T, K], len(items))
	for i, it := range items {
		out[i] = keyed[T, K]{key: key(it), item: it}
	}
	slices.SortFunc(out, func(a, b keyed[T, K]) int { return cmp.Compare(a.key, b.key) })
	for i := 1; i < len(out); i++ {
		if cmp.Compare(out[i-1].key, out[i].key) == 0 {
			return nil, fmt.Errorf("%w %#v in %s items", ErrDuplicateKey, out[i].key, set)
		}
	}
	return out, nil
}

package framework

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// listOnly is an Instances whose direct lookups fail the test: every
// lookup must be served from its list.
type listOnly struct {
	t    *testing.T
	list []*Instance
}

func (l listOnly) InstanceByID(context.Context, string) (*Instance, error) {
	l.t.Error("direct lookup by ID; want the list to answer")
	return nil, errors.New("unexpected")
}

func (l listOnly) InstanceByName(_ context.Context, name string) (*Instance, error) {
	l.t.Errorf("direct lookup of %q; want the list to answer", name)
	return nil, errors.New("unexpected")
}

func (l listOnly) ListInstances(context.Context) ([]*Instance, error) { return l.list, nil }

// TestInstanceCacheAliases: an instance is found by its name and by each
// alias; a name one instance has and another answers to as an alias is
// shared, so an error, never either.
func TestInstanceCacheAliases(t *testing.T) {
	c := newInstanceCache(listOnly{t: t, list: []*Instance{
		{ID: "srv-1", Name: "web", Aliases: []string{"srv-1"}},
		{ID: "srv-2", Name: "db", Aliases: []string{"srv-2"}},
		{ID: "srv-3", Name: "srv-2", Aliases: []string{"srv-3"}},
	}}, time.Hour)
	ctx := t.Context()
	for name, want := range map[string]string{"web": "srv-1", "srv-1": "srv-1", "db": "srv-2", "srv-3": "srv-3"} {
		inst, err := c.byName(ctx, name)
		if err != nil || inst == nil || inst.ID != want {
			t.Errorf("byName(%q) = %+v, %v; want %s", name, inst, err, want)
		}
	}
	if inst, err := c.byName(ctx, "srv-2"); err == nil || !strings.Contains(err.Error(), "srv-2, srv-3") {
		t.Errorf("byName(srv-2) = %+v, %v; want an error naming srv-2 and srv-3", inst, err)
	}
}

package framework

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
		inst, err := c.byName(ctx, name, 0, time.Time{})
		if err != nil || inst == nil || inst.ID != want {
			t.Errorf("byName(%q) = %+v, %v; want %s", name, inst, err, want)
		}
	}
	if inst, err := c.byName(ctx, "srv-2", 0, time.Time{}); err == nil || !strings.Contains(err.Error(), "srv-2, srv-3") {
		t.Errorf("byName(srv-2) = %+v, %v; want an error naming srv-2 and srv-3", inst, err)
	}
}

// countingList is a listOnly that counts its lists.
type countingList struct {
	listOnly
	mu    sync.Mutex
	lists int
}

func (l *countingList) ListInstances(ctx context.Context) ([]*Instance, error) {
	l.mu.Lock()
	l.lists++
	l.mu.Unlock()
	return l.listOnly.ListInstances(ctx)
}

// TestInstanceCacheMaxAge: a lookup with a maximum age (the node
// lifecycle controller's period) answers from a list no older than it,
// refreshed once for every concurrent lookup; one without keeps the TTL.
func TestInstanceCacheMaxAge(t *testing.T) {
	src := &countingList{listOnly: listOnly{t: t, list: []*Instance{{ID: "srv-1", Name: "web"}}}}
	c := newInstanceCache(src, time.Hour)
	now := time.Unix(1e9, 0)
	c.now = func() time.Time { return now }
	ctx := t.Context()
	const period = 5 * time.Second
	lookup := func(maxAge time.Duration) {
		if inst, err := c.byID(ctx, "srv-1", maxAge, time.Time{}); err != nil || inst == nil {
			t.Fatalf("byID = %v, %v", inst, err)
		}
	}
	lookup(period)
	now = now.Add(period - time.Second)
	lookup(period)
	if src.lists != 1 {
		t.Fatalf("a list younger than the period: %d lists, want 1", src.lists)
	}
	now = now.Add(2 * time.Second)
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() { lookup(period) })
	}
	wg.Wait()
	if src.lists != 2 {
		t.Fatalf("20 lookups once the list is older than the period: %d lists in all, want 2", src.lists)
	}
	now = now.Add(10 * period)
	lookup(0)
	if src.lists != 2 {
		t.Fatalf("a lookup without a maximum age within the TTL: %d lists in all, want 2", src.lists)
	}
}

// TestInstanceCacheListAfter: a lookup that needs a list started after a
// time (a Node's going NotReady) does not answer from a younger-than-
// maxAge list that started before it; one refresh serves every such
// lookup after it.
func TestInstanceCacheListAfter(t *testing.T) {
	src := &countingList{listOnly: listOnly{t: t, list: []*Instance{{ID: "srv-1", Name: "web"}}}}
	c := newInstanceCache(src, time.Hour)
	now := time.Unix(1e9, 0)
	c.now = func() time.Time { return now }
	ctx := t.Context()
	const period = 5 * time.Second
	lookup := func(after time.Time) {
		t.Helper()
		if inst, err := c.byID(ctx, "srv-1", period, after); err != nil || inst == nil {
			t.Fatalf("byID = %v, %v", inst, err)
		}
	}
	lookup(time.Time{})
	went := now.Add(time.Second)
	now = now.Add(2 * time.Second) // the list is younger than the period
	lookup(time.Time{})
	if src.lists != 1 {
		t.Fatalf("without a time: %d lists, want 1", src.lists)
	}
	lookup(went)
	if src.lists != 2 {
		t.Fatalf("a list that started before the Node went NotReady answered: %d lists, want 2", src.lists)
	}
	now = now.Add(time.Second)
	lookup(went)
	if src.lists != 2 {
		t.Fatalf("the list started since answers: %d lists, want 2", src.lists)
	}
}

func TestNotReadySince(t *testing.T) {
	now := time.Unix(1e9, 0)
	node := func(status corev1.ConditionStatus, at time.Time) *corev1.Node {
		return &corev1.Node{Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{
			{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse, LastTransitionTime: metav1.NewTime(now.Add(-time.Hour))},
			{Type: corev1.NodeReady, Status: status, LastTransitionTime: metav1.NewTime(at)},
		}}}
	}
	for _, c := range []struct {
		name string
		node *corev1.Node
		want time.Time
	}{
		{"ready", node(corev1.ConditionTrue, now.Add(-time.Minute)), time.Time{}},
		{"no condition", &corev1.Node{}, time.Time{}},
		{"not ready a minute ago", node(corev1.ConditionFalse, now.Add(-time.Minute)), now.Add(-time.Minute + time.Second)},
		{"unknown a minute ago", node(corev1.ConditionUnknown, now.Add(-time.Minute)), now.Add(-time.Minute + time.Second)},
		{"not ready within the second", node(corev1.ConditionFalse, now.Add(-300*time.Millisecond)), now},
		{"not ready later than now", node(corev1.ConditionFalse, now.Add(time.Minute)), time.Time{}},
		{"no transition time", node(corev1.ConditionFalse, time.Time{}), time.Time{}},
	} {
		if got := notReadySince(c.node, now); !got.Equal(c.want) {
			t.Errorf("%s: notReadySince = %v, want %v", c.name, got, c.want)
		}
	}
}

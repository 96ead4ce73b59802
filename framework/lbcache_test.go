package framework

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cloud-provider/api"
	"k8s.io/klog/v2/ktesting"
)

// The load-balancer cache tests run the pipeline on a tiny in-memory cloud
// whose driver lists, and count the cloud calls each step costs.

type tLB struct {
	ID, Owner    string
	Provisioning bool
	Members      []string
}

type tCloud struct {
	mu    sync.Mutex
	lbs   map[string]*tLB
	next  int
	calls map[string]int
	// listErr fails List; createErr makes Create create the LB and then
	// fail, as when its answer is lost.
	listErr, createErr error
	// Hooks run without the lock: listHook after List took its snapshot,
	// createHook before Create makes the LB, deleteHook before Delete.
	listHook, createHook, deleteHook func()
}

func newTCloud() *tCloud { return &tCloud{lbs: map[string]*tLB{}, calls: map[string]int{}} }

func (c *tCloud) call(ctx context.Context, op string) error {
	c.calls[op]++
	return ctx.Err()
}

func (c *tCloud) hook(h *func()) func() {
	c.mu.Lock()
	defer c.mu.Unlock()
	f := *h
	if f == nil {
		return func() {}
	}
	return f
}

func (c *tCloud) set(f func(c *tCloud)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f(c)
}

// Calls returns the calls made so far, by operation.
func (c *tCloud) Calls() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.calls)
}

// advance finishes provisioning every LB.
func (c *tCloud) advance() {
	c.set(func(c *tCloud) {
		for _, lb := range c.lbs {
			lb.Provisioning = false
		}
	})
}

func (c *tCloud) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.lbs)
}

func cloneTLB(lb *tLB) *tLB {
	v := *lb
	v.Members = slices.Clone(lb.Members)
	return &v
}

type tReq = LoadBalancerRequest[struct{}]

type tDriver struct{ c *tCloud }

func (d tDriver) Get(ctx context.Context, id string) (*tLB, error) {
	d.c.mu.Lock()
	defer d.c.mu.Unlock()
	if err := d.c.call(ctx, "get"); err != nil {
		return nil, err
	}
	if lb, ok := d.c.lbs[id]; ok {
		return cloneTLB(lb), nil
	}
	return nil, NotFound("lb %s", id)
}

func (d tDriver) Find(ctx context.Context, req *tReq) (*tLB, error) {
	d.c.mu.Lock()
	defer d.c.mu.Unlock()
	if err := d.c.call(ctx, "find"); err != nil {
		return nil, err
	}
	for _, id := range slices.Sorted(maps.Keys(d.c.lbs)) {
		if lb := d.c.lbs[id]; lb.Owner == string(req.Service.UID) {
			return cloneTLB(lb), nil
		}
	}
	return nil, NotFound("lb for %s", req.Service.Name)
}

func members(req *tReq) []string {
	var out []string
	for _, n := range req.Nodes {
		out = append(out, n.Name)
	}
	return out
}

func (d tDriver) Create(ctx context.Context, req *tReq) (*tLB, error) {
	d.c.hook(&d.c.createHook)()
	d.c.mu.Lock()
	defer d.c.mu.Unlock()
	if err := d.c.call(ctx, "create"); err != nil {
		return nil, err
	}
	d.c.next++
	lb := &tLB{ID: fmt.Sprintf("lb-%03d", d.c.next), Owner: string(req.Service.UID), Provisioning: true, Members: members(req)}
	d.c.lbs[lb.ID] = lb
	if d.c.createErr != nil {
		return nil, d.c.createErr
	}
	return cloneTLB(lb), nil
}

func (d tDriver) Update(ctx context.Context, lb *tLB, req *tReq) (bool, error) {
	want := members(req)
	if slices.Equal(want, lb.Members) {
		return false, nil
	}
	d.c.mu.Lock()
	defer d.c.mu.Unlock()
	if err := d.c.call(ctx, "update"); err != nil {
		return false, err
	}
	cur, ok := d.c.lbs[lb.ID]
	switch {
	case !ok:
		return false, NotFound("lb %s", lb.ID)
	case cur.Provisioning:
		return false, Provisioning("lb %s", lb.ID)
	}
	cur.Members = want
	*lb = *cloneTLB(cur)
	return true, nil
}

func (d tDriver) Delete(ctx context.Context, lb *tLB, _ *tReq) error {
	d.c.hook(&d.c.deleteHook)()
	d.c.mu.Lock()
	defer d.c.mu.Unlock()
	if err := d.c.call(ctx, "delete"); err != nil {
		return err
	}
	if _, ok := d.c.lbs[lb.ID]; !ok {
		return NotFound("lb %s", lb.ID)
	}
	delete(d.c.lbs, lb.ID)
	return nil
}

func (d tDriver) Inspect(lb *tLB) LoadBalancerState {
	s := LoadBalancerState{ID: lb.ID, Provisioning: lb.Provisioning}
	if !lb.Provisioning {
		s.IPs = []string{"192.0.2.1"}
	}
	return s
}

// tLister is tDriver that also lists.
type tLister struct{ tDriver }

func (d tLister) List(ctx context.Context) ([]*tLB, error) {
	d.c.mu.Lock()
	err := d.c.call(ctx, "list")
	if err == nil {
		err = d.c.listErr
	}
	var out []*tLB
	for _, lb := range d.c.lbs {
		out = append(out, cloneTLB(lb))
	}
	d.c.mu.Unlock()
	d.c.hook(&d.c.listHook)()
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (d tLister) Owns(lb *tLB, req *tReq) bool { return lb.Owner == string(req.Service.UID) }

type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

const (
	testLBTTL   = 30 * time.Second
	testIDAnnot = "test.ccmkit.io/load-balancer-id"
)

type lbCacheFixture struct {
	ctx   context.Context
	cloud *tCloud
	clock *fakeClock
	lb    *loadBalancer[struct{}, tLB]
	nodes []*corev1.Node
}

// newLBCacheFixture builds the pipeline over a listing driver. idAnnotation
// "" makes every lookup go by owner (Find), as for drivers without an ID
// annotation. There is no Kubernetes client: tests set the ID annotation
// themselves, as the service controller's next sync would see it.
func newLBCacheFixture(t *testing.T, ttl time.Duration, idAnnotation string) *lbCacheFixture {
	_, ctx := ktesting.NewTestContext(t)
	f := &lbCacheFixture{ctx: ctx, cloud: newTCloud(), clock: &fakeClock{t: time.Unix(1e9, 0)}}
	l := NewLoadBalancer(&Env{LoadBalancerCacheTTL: ttl}, tLister{tDriver{f.cloud}}, LoadBalancerOptions[struct{}]{
		AnnotationPrefix: "test.ccmkit.io/",
		IDAnnotation:     idAnnotation,
	})
	f.lb = l.(*loadBalancer[struct{}, tLB])
	if f.lb.cache != nil {
		f.lb.cache.now = f.clock.Now
	}
	f.nodes = testNodes("a", "b")
	return f
}

func testNodes(names ...string) []*corev1.Node {
	var out []*corev1.Node
	for _, n := range names {
		out = append(out, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n}})
	}
	return out
}

func testServices(n int) []*corev1.Service {
	out := make([]*corev1.Service, n)
	for i := range out {
		out[i] = &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("svc-%d", i), Namespace: "default", UID: types.UID(fmt.Sprintf("uid-%d", i))},
			Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer},
		}
	}
	return out
}

// recordIDs sets each Service's ID annotation to its LB, as the pipeline's
// patch would have.
func (f *lbCacheFixture) recordIDs(svcs []*corev1.Service) {
	f.cloud.mu.Lock()
	defer f.cloud.mu.Unlock()
	for _, lb := range f.cloud.lbs {
		for _, svc := range svcs {
			if string(svc.UID) == lb.Owner {
				svc.Annotations = map[string]string{testIDAnnot: lb.ID}
			}
		}
	}
}

func isRetryError(err error) bool {
	var r *api.RetryError
	return errors.As(err, &r)
}

// ensureAll runs EnsureLoadBalancer for every Service at once and returns
// how many are ready (no error); any error but a retry fails the test.
func (f *lbCacheFixture) ensureAll(t *testing.T, svcs []*corev1.Service, nodes []*corev1.Node) int {
	t.Helper()
	var mu sync.Mutex
	ready := 0
	var wg sync.WaitGroup
	for _, svc := range svcs {
		wg.Go(func() {
			_, err := f.lb.EnsureLoadBalancer(f.ctx, "c", svc, nodes)
			if err != nil && !isRetryError(err) {
				t.Errorf("EnsureLoadBalancer(%s): %v", svc.Name, err)
			}
			mu.Lock()
			defer mu.Unlock()
			if err == nil {
				ready++
			}
		})
	}
	wg.Wait()
	return ready
}

// callsDuring returns the cloud calls fn made, by operation.
func (f *lbCacheFixture) callsDuring(fn func()) map[string]int {
	before := f.cloud.Calls()
	fn()
	out := map[string]int{}
	for op, n := range f.cloud.Calls() {
		if d := n - before[op]; d != 0 {
			out[op] = d
		}
	}
	return out
}

func wantCalls(t *testing.T, step string, want, got map[string]int) {
	t.Helper()
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%s: cloud calls (-want +got):\n%s", step, diff)
	}
}

// N new Services synced at once: one list, one create each; while they
// provision, each poll round costs one list; a node change costs one update
// each and no read.
func TestLBCacheConcurrentEnsuresShareOneList(t *testing.T) {
	const n = 50
	f := newLBCacheFixture(t, 0, testIDAnnot)
	svcs := testServices(n)

	calls := f.callsDuring(func() {
		if ready := f.ensureAll(t, svcs, f.nodes); ready != 0 {
			t.Errorf("%d LBs ready at once, want all provisioning", ready)
		}
	})
	wantCalls(t, "creating", map[string]int{"list": 1, "create": n}, calls)
	if got := f.cloud.count(); got != n {
		t.Fatalf("cloud holds %d LBs, want %d", got, n)
	}
	f.recordIDs(svcs)

	for round := range 3 {
		calls = f.callsDuring(func() {
			if ready := f.ensureAll(t, svcs, f.nodes); ready != 0 {
				t.Errorf("poll %d: %d LBs ready, want none yet", round, ready)
			}
		})
		wantCalls(t, fmt.Sprintf("poll %d while provisioning", round), map[string]int{"list": 1}, calls)
	}

	f.cloud.advance()
	calls = f.callsDuring(func() {
		if ready := f.ensureAll(t, svcs, f.nodes); ready != n {
			t.Errorf("%d LBs ready after provisioning, want %d", ready, n)
		}
	})
	wantCalls(t, "poll after provisioning", map[string]int{"list": 1}, calls)

	calls = f.callsDuring(func() { f.ensureAll(t, svcs, f.nodes) })
	wantCalls(t, "resync with nothing changed", map[string]int{}, calls)

	grown := testNodes("a", "b", "c")
	calls = f.callsDuring(func() { f.ensureAll(t, svcs, grown) })
	wantCalls(t, "node joined", map[string]int{"update": n}, calls)

	// Past the TTL a node change costs one list more, shared by all.
	f.clock.Add(testLBTTL)
	calls = f.callsDuring(func() { f.ensureAll(t, svcs, f.nodes) })
	wantCalls(t, "node left, list expired", map[string]int{"list": 1, "update": n}, calls)

	if got := f.cloud.count(); got != n {
		t.Errorf("cloud holds %d LBs, want %d", got, n)
	}
}

// A single Service polled again and again, as the conformance suite does
// with Advance between polls, gets news each time: it never waits out a
// minimum age.
func TestLBCacheProvisioningPollSeesNews(t *testing.T) {
	f := newLBCacheFixture(t, 0, testIDAnnot)
	svcs := testServices(1)
	f.ensureAll(t, svcs, f.nodes)
	f.recordIDs(svcs)
	for range 3 {
		calls := f.callsDuring(func() { f.ensureAll(t, svcs, f.nodes) })
		wantCalls(t, "poll", map[string]int{"list": 1}, calls)
	}
	f.cloud.advance()
	if ready := f.ensureAll(t, svcs, f.nodes); ready != 1 {
		t.Fatal("the LB is not ready on the first poll after it became active")
	}
}

// startBlockedRefresh makes the next cloud call run a refresh that has
// listed the cloud as it is now but has not finished: the clock moves past
// the TTL and another Service's GetLoadBalancer starts the refresh. It
// returns a func that lets the refresh finish and waits for it.
func (f *lbCacheFixture) startBlockedRefresh(t *testing.T, other *corev1.Service) (finish func()) {
	listing, release := make(chan struct{}), make(chan struct{})
	f.cloud.set(func(c *tCloud) {
		c.listHook = func() {
			listing <- struct{}{}
			<-release
		}
	})
	f.clock.Add(2 * testLBTTL)
	var wg sync.WaitGroup
	wg.Go(func() {
		if _, _, err := f.lb.GetLoadBalancer(f.ctx, "c", other); err != nil {
			t.Errorf("GetLoadBalancer(%s): %v", other.Name, err)
		}
	})
	<-listing
	f.cloud.set(func(c *tCloud) { c.listHook = nil })
	return func() {
		close(release)
		wg.Wait()
	}
}

// A refresh that listed the cloud before a create and finished after it
// must still hold the new LB: the next sync (by owner, here) would
// otherwise create a second one.
func TestLBCacheCreateDuringRefreshIsFound(t *testing.T) {
	f := newLBCacheFixture(t, 0, "") // by owner only
	svcs := testServices(2)
	var finish func()
	f.cloud.set(func(c *tCloud) {
		c.createHook = func() {
			f.cloud.set(func(c *tCloud) { c.createHook = nil })
			finish = f.startBlockedRefresh(t, svcs[1])
		}
	})
	if _, err := f.lb.EnsureLoadBalancer(f.ctx, "c", svcs[0], f.nodes); !isRetryError(err) {
		t.Fatalf("first Ensure = %v, want a retry while provisioning", err)
	}
	finish()

	if _, err := f.lb.EnsureLoadBalancer(f.ctx, "c", svcs[0], f.nodes); !isRetryError(err) {
		t.Fatalf("second Ensure = %v, want a retry while provisioning", err)
	}
	if got, creates := f.cloud.count(), f.cloud.Calls()["create"]; got != 1 || creates != 1 {
		t.Fatalf("cloud holds %d LBs after %d creates, want 1 and 1", got, creates)
	}
	f.cloud.advance()
	if _, err := f.lb.EnsureLoadBalancer(f.ctx, "c", svcs[0], f.nodes); err != nil {
		t.Fatalf("Ensure after provisioning: %v", err)
	}
}

// A refresh that listed the cloud before a delete and finished after it
// must not bring the LB back.
func TestLBCacheDeleteDuringRefreshStaysGone(t *testing.T) {
	f := newLBCacheFixture(t, 0, testIDAnnot)
	svcs := testServices(2)
	f.ensureAll(t, svcs[:1], f.nodes)
	f.recordIDs(svcs)
	f.cloud.advance()
	if ready := f.ensureAll(t, svcs[:1], f.nodes); ready != 1 {
		t.Fatal("LB not ready")
	}

	var finish func()
	f.cloud.set(func(c *tCloud) {
		c.deleteHook = func() {
			f.cloud.set(func(c *tCloud) { c.deleteHook = nil })
			finish = f.startBlockedRefresh(t, svcs[1])
		}
	})
	if err := f.lb.EnsureLoadBalancerDeleted(f.ctx, "c", svcs[0]); err != nil {
		t.Fatal(err)
	}
	finish()

	if _, exists, err := f.lb.GetLoadBalancer(f.ctx, "c", svcs[0]); err != nil || exists {
		t.Errorf("GetLoadBalancer after delete = exists %v, %v; want false", exists, err)
	}
	if err := f.lb.UpdateLoadBalancer(f.ctx, "c", svcs[0], testNodes("a")); err == nil {
		t.Error("UpdateLoadBalancer of the deleted LB succeeded; want an error")
	}
	if updates := f.cloud.Calls()["update"]; updates != 0 {
		t.Errorf("%d updates of the deleted LB, want 0", updates)
	}
}

// A failing list makes the pipeline call Get and Find directly until the
// next refresh, not list again on every lookup.
func TestLBCacheListFailureFallsBackToDirectCalls(t *testing.T) {
	f := newLBCacheFixture(t, 0, testIDAnnot)
	svcs := testServices(1)
	f.cloud.set(func(c *tCloud) { c.listErr = errors.New("HTTP 503") })

	calls := f.callsDuring(func() { f.ensureAll(t, svcs, f.nodes) })
	wantCalls(t, "create with a failing list", map[string]int{"list": 1, "find": 1, "create": 1}, calls)
	f.recordIDs(svcs)
	f.cloud.advance()
	calls = f.callsDuring(func() {
		if f.ensureAll(t, svcs, f.nodes) != 1 {
			t.Error("LB not ready")
		}
	})
	wantCalls(t, "poll within the TTL", map[string]int{"get": 1}, calls)

	f.cloud.set(func(c *tCloud) { c.listErr = nil })
	f.clock.Add(testLBTTL)
	calls = f.callsDuring(func() { f.ensureAll(t, svcs, testNodes("a")) })
	wantCalls(t, "list back", map[string]int{"list": 1, "update": 1}, calls)
}

// A negative TTL is the pipeline without a cache: Get and Find each time.
func TestLBCacheNegativeTTLDisables(t *testing.T) {
	f := newLBCacheFixture(t, -1, testIDAnnot)
	if f.lb.cache != nil {
		t.Fatal("a negative TTL built a cache")
	}
	svcs := testServices(1)
	calls := f.callsDuring(func() { f.ensureAll(t, svcs, f.nodes) })
	wantCalls(t, "create", map[string]int{"find": 1, "create": 1}, calls)
	f.recordIDs(svcs)
	calls = f.callsDuring(func() { f.ensureAll(t, svcs, f.nodes) })
	wantCalls(t, "poll", map[string]int{"get": 1}, calls)
}

// A create whose answer was lost may have made the LB: the next sync must
// not trust a list that started before it, or it makes a second LB.
func TestLBCacheLostCreateAnswerIsNotDuplicated(t *testing.T) {
	f := newLBCacheFixture(t, 0, testIDAnnot)
	svcs := testServices(1)
	f.cloud.set(func(c *tCloud) { c.createErr = errors.New("connection reset") })
	if _, err := f.lb.EnsureLoadBalancer(f.ctx, "c", svcs[0], f.nodes); err == nil {
		t.Fatal("Ensure succeeded although Create failed")
	}
	f.cloud.set(func(c *tCloud) { c.createErr = nil })

	calls := f.callsDuring(func() { f.ensureAll(t, svcs, f.nodes) })
	wantCalls(t, "sync after the lost answer", map[string]int{"list": 1}, calls)
	if got := f.cloud.count(); got != 1 {
		t.Errorf("cloud holds %d LBs, want 1", got)
	}
}

// After a failed update the cached LB may be wrong: it is read directly.
func TestLBCacheFailedUpdateReadsDirectly(t *testing.T) {
	f := newLBCacheFixture(t, 0, testIDAnnot)
	svcs := testServices(1)
	f.ensureAll(t, svcs, f.nodes)
	f.recordIDs(svcs)
	f.cloud.advance()
	f.ensureAll(t, svcs, f.nodes)

	// Someone else starts changing the LB; the list does not know yet.
	f.cloud.set(func(c *tCloud) {
		for _, lb := range c.lbs {
			lb.Provisioning = true
		}
	})
	if _, err := f.lb.EnsureLoadBalancer(f.ctx, "c", svcs[0], testNodes("a")); !isRetryError(err) {
		t.Fatalf("Ensure on a busy LB = %v, want a retry", err)
	}
	calls := f.callsDuring(func() { f.ensureAll(t, svcs, testNodes("a")) })
	wantCalls(t, "sync after the failed update", map[string]int{"get": 1}, calls)
}

// A caller whose context ends stops waiting for a slow list.
func TestLBCacheCallerCancelStopsWaiting(t *testing.T) {
	f := newLBCacheFixture(t, 0, testIDAnnot)
	release := make(chan struct{})
	defer close(release)
	f.cloud.set(func(c *tCloud) { c.listHook = func() { <-release } })
	ctx, cancel := context.WithTimeout(f.ctx, 50*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := f.lb.EnsureLoadBalancer(ctx, "c", testServices(1)[0], f.nodes)
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Error("Ensure with an ended context succeeded")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Ensure still waits for the list after its context ended")
	}
}

// Callers get copies: changing one never changes the cache.
func TestLBCacheHandsOutCopies(t *testing.T) {
	f := newLBCacheFixture(t, 0, testIDAnnot)
	svcs := testServices(1)
	f.ensureAll(t, svcs, f.nodes)
	f.recordIDs(svcs)
	c := f.lb.cache
	id := svcs[0].Annotations[testIDAnnot]
	lb, err := c.get(f.ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	lb.Owner, lb.Members = "someone-else", nil
	again, err := c.get(f.ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if again.Owner != "uid-0" || len(again.Members) != 2 {
		t.Errorf("cached LB changed through a copy: %+v", again)
	}
}

// Write records live only until a list that started after them lands.
func TestLBCacheRecordsArePruned(t *testing.T) {
	f := newLBCacheFixture(t, 0, testIDAnnot)
	svcs := testServices(20)
	f.ensureAll(t, svcs, f.nodes)
	f.recordIDs(svcs)
	f.clock.Add(testLBTTL)
	f.ensureAll(t, svcs, f.nodes)
	c := f.lb.cache
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.entries) != 20 || len(c.records) != 0 {
		t.Errorf("cache holds %d entries and %d records, want 20 and 0", len(c.entries), len(c.records))
	}
}

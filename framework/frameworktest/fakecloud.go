package frameworktest

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/ccmkit/ccmkit/framework"
)

// FakeCloud is an in-memory cloud with fault injection, behind
// FakeProvider. It implements Cloud, so the conformance suite runs on it.
type FakeCloud struct {
	// PageSize is how many instances one list call returns (default 100).
	PageSize int
	// ProvisioningReads, when positive, makes a new LB active at its
	// ProvisioningReads-th read (a get, or a list holding it), as the
	// simulated clouds do; otherwise only Advance does.
	ProvisioningReads int
	// Broken makes the provider misbehave on purpose, to prove the
	// conformance suite catches it.
	Broken Broken

	mu        sync.Mutex
	next      int
	instances map[string]*fakeInstance
	lbs       map[string]*fakeLB
	routes    map[string]fakeRoute // by destination CIDR
	calls     map[string]int
	writes    int
	fault     *Fault
}

// Broken lists the contract violations FakeCloud can commit.
type Broken struct {
	// WriteOnNoop: Update rewrites the LB even when nothing changed.
	WriteOnNoop bool
	// NotFoundOnError: a failed instance lookup is reported as not-found.
	NotFoundOnError bool
	// ListenersOnNodeChange: a member change also rewrites the listeners
	// (as a provider that rebuilds the whole LB from scratch might).
	ListenersOnNodeChange bool
	// FindMissingFails: looking up an LB that does not exist is an error
	// rather than not-found, so deletes are not idempotent.
	FindMissingFails bool
	// NotFoundOnAny404: an instance lookup answered with any 404, a proxy's
	// page included, is reported as not-found.
	NotFoundOnAny404 bool
	// GuessByName: of several instances with a Node's name, the lookup by
	// name returns one.
	GuessByName bool
	// FindNeverFinds: the driver cannot find a Service's LB by owner (so
	// an LB whose ID annotation was lost is made a second time).
	FindNeverFinds bool
	// ClaimsEveryLB: the driver takes every LB for the Service's own (so a
	// Service whose ID annotation was copied from another takes the
	// other's LB over).
	ClaimsEveryLB bool
}

type fakeInstance struct {
	framework.Instance
	account string // FakeAccountVar's value that sees it; "" is the main account
}

// FakeAccountVar is the setting of FakeProvider that picks the account of
// the FakeCloud its credential belongs to; unset is the main account,
// where AddInstance creates instances.
const FakeAccountVar = "FAKE_ACCOUNT"

// OtherAccount implements AccountSwitcher: the "other" account, which
// holds an instance of its own and none of the main account's.
func (c *FakeCloud) OtherAccount() Credentials {
	c.mu.Lock()
	defer c.mu.Unlock()
	const other = "other"
	if !slices.ContainsFunc(slices.Collect(maps.Values(c.instances)), func(i *fakeInstance) bool { return i.account == other }) {
		c.add(other, "other-0")
	}
	return Credentials{Env: map[string]string{FakeAccountVar: other}}
}

type fakeLB struct {
	ID, Name, Owner string
	Provisioning    bool
	reads           int
	Listeners       []string
	Members         []string
	HealthInterval  time.Duration
	ProxyProtocol   bool
	IP              string
	// Pending and DNSName are reported as LoadBalancerState's.
	Pending, DNSName string
}

type fakeRoute struct {
	Target string // instance ID
	CIDR   string
}

// NewFakeCloud returns an empty fake cloud.
func NewFakeCloud() *FakeCloud {
	return &FakeCloud{
		PageSize:  100,
		instances: map[string]*fakeInstance{},
		lbs:       map[string]*fakeLB{},
		routes:    map[string]fakeRoute{},
		calls:     map[string]int{},
	}
}

// AddInstance creates a running instance.
func (c *FakeCloud) AddInstance(name string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.add("", name)
}

// add creates a running instance in account; c.mu is held.
func (c *FakeCloud) add(account, name string) string {
	c.next++
	id := fmt.Sprintf("fake-%d", c.next)
	c.instances[id] = &fakeInstance{Instance: framework.Instance{
		ID: id, Name: name, Type: "fake-small", Region: "fake-1", Zone: "fake-1a",
		Addresses: nodeAddresses(name, c.next),
	}, account: account}
	return id
}

// DeleteInstance removes an instance.
func (c *FakeCloud) DeleteInstance(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.instances, id)
}

// ShutdownInstance powers an instance off.
func (c *FakeCloud) ShutdownInstance(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if inst, ok := c.instances[id]; ok {
		inst.Shutdown = true
	}
}

// Fail makes every call fail with f until restore is called.
func (c *FakeCloud) Fail(f Fault) (restore func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.fault = &f
	return func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.fault = nil
	}
}

// Writes counts mutating calls.
func (c *FakeCloud) Writes() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.writes
}

// Calls returns how many calls of each operation the cloud served.
func (c *FakeCloud) Calls() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int, len(c.calls))
	for k, v := range c.calls {
		out[k] = v
	}
	return out
}

// LoadBalancers lists the cloud's LBs.
func (c *FakeCloud) LoadBalancers() []LoadBalancer {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []LoadBalancer
	for _, lb := range c.lbs {
		out = append(out, LoadBalancer{
			ID: lb.ID, Name: lb.Name,
			Listeners: append([]string(nil), lb.Listeners...),
			Members:   append([]string(nil), lb.Members...),
		})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Advance finishes provisioning of every LB.
func (c *FakeCloud) Advance() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, lb := range c.lbs {
		lb.Provisioning = false
	}
}

// SetPending makes the LB report what the cloud is still completing on it
// (LoadBalancerState.Pending); "" clears it.
func (c *FakeCloud) SetPending(id, pending string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if lb := c.lbs[id]; lb != nil {
		lb.Pending = pending
	}
}

// SetDNSName gives the LB's address a DNS name (LoadBalancerState.DNSName).
func (c *FakeCloud) SetDNSName(id, name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if lb := c.lbs[id]; lb != nil {
		lb.DNSName = name
	}
}

// read counts a read of lb, which settles it at the ProvisioningReads-th.
// The caller holds c.mu.
func (c *FakeCloud) read(lb *fakeLB) {
	if lb.Provisioning && c.ProvisioningReads > 0 {
		if lb.reads++; lb.reads >= c.ProvisioningReads {
			lb.Provisioning = false
		}
	}
}

// call records one API call and returns the injected fault, if any. The
// caller holds c.mu.
func (c *FakeCloud) call(ctx context.Context, op string, write bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.calls[op]++
	if f := c.fault; f != nil {
		switch {
		case f.Delay > 0:
			return fmt.Errorf("fake cloud %s: %w", op, context.DeadlineExceeded)
		case f.Truncate:
			return fmt.Errorf("fake cloud %s: malformed response: unexpected end of JSON input", op)
		case f.ContentType != "":
			return &fakeHTTPError{op: op, status: f.Status, contentType: f.ContentType}
		}
		return &fakeHTTPError{op: op, status: f.Status}
	}
	if write {
		c.writes++
	}
	return nil
}

// fakeHTTPError is an error answer: the cloud's own (contentType "") or
// someone else's page.
type fakeHTTPError struct {
	op, contentType string
	status          int
}

func (e *fakeHTTPError) Error() string {
	if e.contentType != "" {
		return fmt.Sprintf("fake cloud %s: HTTP %d %s (a %s page, not the API's answer)", e.op, e.status, http.StatusText(e.status), e.contentType)
	}
	return fmt.Sprintf("fake cloud %s: HTTP %d %s", e.op, e.status, http.StatusText(e.status))
}

func nodeAddresses(name string, n int) []corev1.NodeAddress {
	return []corev1.NodeAddress{
		{Type: corev1.NodeInternalIP, Address: fmt.Sprintf("10.0.%d.%d", n/250, n%250+1)},
		{Type: corev1.NodeHostName, Address: name},
	}
}

// FakeHarness runs the conformance suite on a FakeProvider.
type FakeHarness struct{ Broken Broken }

// Setup implements Harness.
func (h FakeHarness) Setup(t *testing.T) *Target {
	cloud := NewFakeCloud()
	cloud.Broken = h.Broken
	return &Target{
		Provider:           NewFakeProvider(cloud),
		Cloud:              cloud,
		InvalidAnnotations: map[string]string{FakeAnnotationPrefix + "health-check-interval": "abc"},
	}
}

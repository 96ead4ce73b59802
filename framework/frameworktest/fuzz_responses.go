package frameworktest

import (
	"fmt"
	"maps"
	"os"
	"path"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	cloudprovider "k8s.io/cloud-provider"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// FuzzResponses fuzzes the provider h sets up with its simulated cloud
// answering one request with a mutated body: truncated JSON, a value of
// the wrong type, an unknown enum value, a missing field, a huge array
// (simkit.Mutation). Call it from the provider's tests, with the
// conformance harness:
//
//	func FuzzResponses(f *testing.F) { frameworktest.FuzzResponses(f, harness{}) }
//
// Each input names an operation (and how the framework's caches are set),
// which of the operation's API answers to mutate (the Nth, any method)
// and the mutation's bytes. A fresh cloud gets instances and, for the
// load-balancer operations, a Service and its load balancer made cleanly;
// then the operation runs once with the mutation armed, and once more
// cleanly. It fails on a panic, on InstanceExists saying false or
// InstanceShutdown true for a running instance, on metadata, a status or
// routes that differ from the clean answer without an error, on a read
// that writes, and when, after the clean run, the cloud holds other than
// exactly one load balancer for the Service with the clean listeners and
// members (none after a delete), or a companion (simkit.CompanionLister)
// of a load balancer that is gone.
//
// With CCMKIT_FUZZ_WALK=<step> set, plain `go test -run FuzzResponses`
// also walks the answers (walkSeeds): it replays, for every operation,
// each of the first answers and each mutation kind, the mutation of every
// step-th member, deterministically; the random fuzzer can miss a member
// for a long time.
func FuzzResponses(f *testing.F, h Harness) {
	seeds := responseSeeds()
	if v := os.Getenv(walkEnv); v != "" { //nolint:forbidigo // a switch of the test harness, as CCMKIT_E2E is, not CCM configuration
		step, err := strconv.Atoi(v)
		if err != nil || step < 1 {
			f.Fatalf("%s=%q: want a step of 1 or more", walkEnv, v)
		}
		seeds = append(seeds, walkSeeds(step)...)
	}
	for _, s := range seeds {
		f.Add(s.op, s.nth, s.mutation)
	}
	ref := &cleanReference{h: h}
	f.Fuzz(func(t *testing.T, op, nth uint8, mutation []byte) {
		c := responseCase{
			op:       fuzzOp(op % uint8(numFuzzOps)),
			flags:    op / uint8(numFuzzOps),
			nth:      int32(nth % 32),
			mutation: mutation,
		}
		c.run(t, h, ref)
	})
}

// fuzzOp is the operation a FuzzResponses input runs with a mutated
// answer.
type fuzzOp uint8

const (
	opInstanceMetadata fuzzOp = iota
	opInstanceExists
	opInstanceShutdown
	opGetLoadBalancer
	opEnsureCreate
	opEnsureUpdate
	opEnsureDeleted
	opListRoutes
	opCreateRoute
	numFuzzOps
)

var fuzzOpNames = [...]string{"InstanceMetadata", "InstanceExists", "InstanceShutdown", "GetLoadBalancer",
	"EnsureLoadBalancer(create)", "EnsureLoadBalancer(update)", "EnsureLoadBalancerDeleted", "ListRoutes", "CreateRoute"}

func (o fuzzOp) String() string { return fuzzOpNames[o] }

// Flags of an input, in the op byte above the operation.
const (
	flagByName        = 1 << iota // instance operations look the Node up by name
	flagInstanceCache             // the framework's instance cache is on
	flagLBCache                   // the framework's load-balancer list is on
)

type responseSeed struct {
	op, nth  uint8
	mutation []byte
}

// responseSeeds are, for each operation, mutations of each kind on the
// first three answers, and the instance lookups by name and through the
// cache.
func responseSeeds() []responseSeed {
	mutations := [][]byte{
		{byte(simkit.MutateTruncate), 0x80, 0},
		{byte(simkit.MutateRetype), 0, 2, 0},
		{byte(simkit.MutateUnknownEnum), 0, 0, 0},
		{byte(simkit.MutateDropField), 0, 1},
		{byte(simkit.MutateHugeArray), 0, 0, 0, 0},
		{byte(simkit.MutateDuplicate), 0, 0},
		{byte(simkit.MutateEmpty), 0, 1},
	}
	var seeds []responseSeed
	for op := range numFuzzOps {
		for i, m := range mutations {
			seeds = append(seeds, responseSeed{op: uint8(op), nth: uint8(i % 3), mutation: m})
		}
	}
	for _, flags := range []uint8{flagByName, flagInstanceCache, flagByName | flagInstanceCache} {
		for op := range opGetLoadBalancer {
			seeds = append(seeds, responseSeed{op: uint8(op) + flags*uint8(numFuzzOps), mutation: mutations[(int(op)+int(flags))%len(mutations)]})
		}
	}
	return seeds
}

// walkEnv turns FuzzResponses' walk on (`make fuzz-walk`); walkMembers
// bounds the members it visits in one answer.
const (
	walkEnv     = "CCMKIT_FUZZ_WALK"
	walkMembers = 512
)

// walkSeeds are, for each operation, each of its first four answers and
// each mutation that names a member (all but truncate and the huge
// array), the mutation of the k-th candidate member for k = 0, step,
// 2*step... below walkMembers (simkit.Mutation takes k modulo the
// candidates: step 1 visits every member of an answer with fewer).
func walkSeeds(step int) []responseSeed {
	kinds := []simkit.MutationKind{simkit.MutateRetype, simkit.MutateUnknownEnum, simkit.MutateDropField, simkit.MutateDuplicate, simkit.MutateEmpty}
	var seeds []responseSeed
	for op := range numFuzzOps {
		for nth := range uint8(4) {
			for _, kind := range kinds {
				for k := 0; k < walkMembers; k += step {
					seeds = append(seeds, responseSeed{op: uint8(op), nth: nth, mutation: []byte{byte(kind), byte(k >> 8), byte(k)}})
				}
			}
		}
	}
	return seeds
}

// responseCase is one FuzzResponses input.
type responseCase struct {
	op       fuzzOp
	flags    uint8
	nth      int32
	mutation []byte
}

func (c responseCase) variant() variant {
	v := variant{name: c.op.String(), lbCacheTTL: -1}
	if c.flags&flagInstanceCache != 0 {
		v.instanceCacheTTL = 1 // refreshed for every lookup, as the conformance suite does
	}
	if c.flags&flagLBCache != 0 {
		v.lbCacheTTL = framework.DefaultLoadBalancerCacheTTL
	}
	return v
}

// arm injects the mutation of the case's Nth answer; restore takes it
// out. A panic in the mutation itself, which the simulator's HTTP server
// would swallow, fails the test.
func (c responseCase) arm(t *testing.T, s *suite) (restore func(), emptied func() bool) {
	restore, emptied, _ = c.armed(t, s)
	return restore, emptied
}

// armed is arm, and reports too whether the mutation changed one of the
// target's OptionalFields.
func (c responseCase) armed(t *testing.T, s *suite) (restore func(), emptied, optionalField func() bool) {
	var seen atomic.Int32
	var emptiedList, optional atomic.Bool
	mutate := simkit.Mutation(c.mutation)
	restore = s.target.Cloud.Fail(Fault{Mutate: func(status int, body []byte) []byte {
		if seen.Add(1)-1 != c.nth {
			return body
		}
		defer func() {
			if r := recover(); r != nil {
				t.Errorf("mutating answer %d (status %d): panic: %v", c.nth, status, r)
				panic(r)
			}
		}()
		out := mutate(status, body)
		if kind, at, ok := simkit.MutatedPath(c.mutation, body); ok {
			t.Logf("answer %d (status %d): mutation %d at %s", c.nth, status, kind, at)
		}
		t.Logf("answer %d (status %d) mutated to: %.600s", c.nth, status, out)
		_, emptiesArray := simkit.MutatesArray(c.mutation, body)
		emptiedList.Store(emptiesArray)
		optional.Store(mutatesOptionalField(c.mutation, body, s.target.OptionalFields))
		return out
	}})
	return restore, emptiedList.Load, optional.Load
}

// mutatesOptionalField reports whether the mutation drops, empties or renames
// a member matching one of patterns (Target.OptionalFields).
func mutatesOptionalField(mutation, body []byte, patterns []string) bool {
	kind, at, ok := simkit.MutatedPath(mutation, body)
	if !ok || kind != simkit.MutateDropField && kind != simkit.MutateEmpty && kind != simkit.MutateUnknownEnum {
		return false
	}
	return slices.ContainsFunc(patterns, func(p string) bool {
		m, err := path.Match(p, at)
		return err == nil && m
	})
}

func (c responseCase) run(t *testing.T, h Harness, ref *cleanReference) {
	t.Logf("FuzzResponses: %s", c)
	s := newSuiteFor(t, h.Setup(t), c.variant())
	switch c.op {
	case opInstanceMetadata, opInstanceExists, opInstanceShutdown:
		c.runInstance(t, s)
	case opListRoutes, opCreateRoute:
		c.runRoutes(t, s)
	default:
		c.runLoadBalancer(t, s, ref)
	}
}

// runInstance checks that a mutated answer never makes a running
// instance gone, shut down, or described in part.
func (c responseCase) runInstance(t *testing.T, s *suite) {
	inst := s.instances(t)
	name := "fuzz-0"
	node := s.node(name, s.target.Cloud.AddInstance(name))
	if c.flags&flagByName != 0 {
		node = s.node(name, "")
	}
	clean, err := inst.InstanceMetadata(s.ctx, node)
	if err != nil {
		t.Fatalf("clean InstanceMetadata: %v", err)
	}
	restore, emptied, optionalField := c.armed(t, s)
	writes := s.writesDuring(func() {
		switch c.op {
		case opInstanceMetadata:
			md, err := inst.InstanceMetadata(s.ctx, node)
			switch {
			case err != nil:
			case (emptied() || c.renamedByName()) && cmp.Equal(essential(md), essential(heldBy(node))):
				// The instance is gone, as InstanceExists may say: the
				// framework answers an initialized Node with what it
				// holds, which changes nothing.
			case !optionalField() && !cmp.Equal(essential(clean), c.renamed(clean, essential(md))):
				t.Errorf("InstanceMetadata with a mutated answer differs from the clean one without an error (-clean +got):\n%s", cmp.Diff(essential(clean), essential(md)))
			}
		case opInstanceExists:
			// An emptied list is a well-formed answer that the instance is
			// gone: no client can tell it from the cloud's. So is, to a
			// lookup by name, an instance renamed (c.renamedByName).
			if ok, err := inst.InstanceExists(s.ctx, node); err == nil && !ok && !emptied() && !c.renamedByName() {
				t.Error("InstanceExists for a running instance with a mutated answer = false, nil; want true or an error")
			}
		case opInstanceShutdown:
			if off, err := inst.InstanceShutdown(s.ctx, node); err == nil && off {
				t.Error("InstanceShutdown for a running instance with a mutated answer = true, nil; want false or an error")
			}
		}
	})
	restore()
	if writes != 0 {
		t.Errorf("%s with a mutated answer made %d cloud writes, want 0", c.op, writes)
	}
}

// runRoutes checks that a mutated answer never lists other routes than
// the cloud's, and leaves nothing a clean CreateRoute does not mend.
func (c responseCase) runRoutes(t *testing.T, s *suite) {
	if s.cloud.routes == nil {
		t.Skip("provider has no routes")
	}
	nodes := s.addNodes("route", 2)
	routes := []*cloudprovider.Route{
		{Name: "r0", TargetNode: types.NodeName(nodes[0].Name), DestinationCIDR: "10.244.0.0/24"},
		{Name: "r1", TargetNode: types.NodeName(nodes[1].Name), DestinationCIDR: "10.244.1.0/24"},
	}
	if err := s.cloud.routes.CreateRoute(s.ctx, clusterName, "fuzz", routes[0]); err != nil {
		t.Fatalf("clean CreateRoute: %v", err)
	}
	clean := s.listRoutes(t)
	restore, emptied := c.arm(t, s)
	switch c.op {
	case opListRoutes:
		writes := s.writesDuring(func() {
			list, err := s.cloud.routes.ListRoutes(s.ctx, clusterName)
			if err != nil {
				return
			}
			got := map[string]types.NodeName{}
			for _, r := range list {
				got[r.DestinationCIDR] = r.TargetNode
			}
			if !cmp.Equal(clean, got) && !emptied() && !c.renamedTargets(clean, got) {
				t.Errorf("ListRoutes with a mutated answer differs from the clean one without an error (-clean +got):\n%s", cmp.Diff(clean, got))
			}
		})
		if writes != 0 {
			t.Errorf("ListRoutes with a mutated answer made %d cloud writes, want 0", writes)
		}
	case opCreateRoute:
		_ = s.cloud.routes.CreateRoute(s.ctx, clusterName, "fuzz", routes[1])
	}
	restore()
	if err := s.cloud.routes.CreateRoute(s.ctx, clusterName, "fuzz", routes[1]); err != nil {
		t.Fatalf("clean CreateRoute after the mutated %s: %v", c.op, err)
	}
	want := map[string]types.NodeName{routes[0].DestinationCIDR: routes[0].TargetNode, routes[1].DestinationCIDR: routes[1].TargetNode}
	if got := s.listRoutes(t); !cmp.Equal(want, got) {
		t.Errorf("after the mutated %s and a clean CreateRoute, routes (-want +got):\n%s", c.op, cmp.Diff(want, got))
	}
}

// runLoadBalancer checks that a mutated answer never gives a status
// other than the clean one without an error, and leaves nothing a clean
// run does not mend: then the cloud holds exactly one load balancer for
// the Service, with the clean listeners and members, or none after a
// delete.
func (c responseCase) runLoadBalancer(t *testing.T, s *suite, ref *cleanReference) {
	if s.cloud.lb == nil {
		t.Skip("provider has no load balancers")
	}
	listeners := ref.get(t, c.variant())
	before, after := nodesFor(c.op, s.addNodes("fuzz", 3))
	svc := s.service(t, "fuzz", nil)
	var clean *corev1.LoadBalancerStatus
	if c.op != opEnsureCreate {
		clean = s.ensure(t, svc, before)
	}
	companionsBefore := companions(s.target.Cloud)

	restore, emptied, optionalField := c.armed(t, s)
	var mutated *corev1.LoadBalancerStatus // what the mutated call returned without an error
	writes := s.writesDuring(func() {
		switch c.op {
		case opGetLoadBalancer:
			status, exists, err := s.cloud.lb.GetLoadBalancer(s.ctx, clusterName, s.fresh(t, svc))
			// An emptied list (a load balancer with no address yet) or an
			// optional member changes the status of a well-formed answer.
			if err == nil && (!exists || !cmp.Equal(clean, status) && !optionalField() && !emptied()) {
				t.Errorf("GetLoadBalancer with a mutated answer = exists %v, nil; status (-clean +got):\n%s", exists, cmp.Diff(clean, status))
			}
		case opEnsureCreate, opEnsureUpdate:
			if status, err := s.cloud.lb.EnsureLoadBalancer(s.ctx, clusterName, s.fresh(t, svc), after); err == nil {
				mutated = status
			}
		case opEnsureDeleted:
			_ = s.cloud.lb.EnsureLoadBalancerDeleted(s.ctx, clusterName, s.fresh(t, svc))
		}
	})
	restore()
	if c.op == opGetLoadBalancer && writes != 0 {
		t.Errorf("GetLoadBalancer with a mutated answer made %d cloud writes, want 0", writes)
	}

	if c.op == opEnsureDeleted {
		s.settle(t, "clean EnsureLoadBalancerDeleted after a mutated one", func() error {
			return s.cloud.lb.EnsureLoadBalancerDeleted(s.ctx, clusterName, s.fresh(t, svc))
		})
		if lbs := s.target.Cloud.LoadBalancers(); len(lbs) != 0 {
			t.Errorf("after a mutated and a clean EnsureLoadBalancerDeleted the cloud holds %+v, want none", lbs)
		}
	} else {
		var final *corev1.LoadBalancerStatus
		s.settle(t, fmt.Sprintf("clean EnsureLoadBalancer after the mutated %s", c.op), func() (err error) {
			final, err = s.cloud.lb.EnsureLoadBalancer(s.ctx, clusterName, s.fresh(t, svc), after)
			return err
		})
		want := LoadBalancer{Listeners: listeners, Members: s.memberIDs(t, after)}
		if lbs := s.target.Cloud.LoadBalancers(); len(lbs) != 1 {
			t.Errorf("after the mutated %s and a clean EnsureLoadBalancer the cloud holds %d load balancers, want 1: %+v", c.op, len(lbs), lbs)
		} else if got := (LoadBalancer{Listeners: lbs[0].Listeners, Members: lbs[0].Members}); !cmp.Equal(want, got) {
			t.Errorf("after the mutated %s and a clean EnsureLoadBalancer, the load balancer (-want +got):\n%s", c.op, cmp.Diff(want, got))
		}
		if mutated != nil && !cmp.Equal(mutated, final) && !optionalField() && !emptied() {
			t.Errorf("the mutated %s returned a status without an error that differs from the clean one (-clean +mutated):\n%s", c.op, cmp.Diff(final, mutated))
		}
	}
	s.target.Cloud.Advance() // removals the cloud finishes asynchronously
	checkCompanions(t, s, companionsBefore, c.op)
}

// settle calls call until it succeeds, advancing the simulated cloud
// whenever the pipeline asks to be retried.
func (s *suite) settle(t *testing.T, what string, call func() error) {
	t.Helper()
	for range s.target.MaxProvisioningPolls {
		err := call()
		if err == nil {
			return
		}
		if !IsRetry(err) {
			t.Fatalf("%s: %v", what, err)
		}
		s.target.Cloud.Advance()
	}
	t.Fatalf("%s: not done after %d polls", what, s.target.MaxProvisioningPolls)
}

// cleanReference is the load balancer a clean EnsureLoadBalancer makes
// for the Service FuzzResponses uses, found once per process.
type cleanReference struct {
	h         Harness
	mu        sync.Mutex
	listeners []string
}

func (r *cleanReference) get(t *testing.T, v variant) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.listeners == nil {
		s := newSuiteFor(t, r.h.Setup(t), v)
		nodes := s.addNodes("fuzz", 2)
		s.ensure(t, s.service(t, "fuzz", nil), nodes)
		r.listeners = s.onlyLB(t).Listeners
	}
	return r.listeners
}

// companions returns what the target's cloud lists as its load
// balancers' companions, nil when it lists none.
func companions(c Cloud) map[string]string {
	var cl simkit.CompanionLister
	switch x := c.(type) {
	case simCloud:
		cl, _ = x.c.(simkit.CompanionLister)
	case rotatingSimCloud:
		cl, _ = x.c.(simkit.CompanionLister)
	case simkit.CompanionLister:
		cl = x
	}
	if cl == nil {
		return nil
	}
	return cl.Companions()
}

// checkCompanions fails for a companion, after a run, of a load balancer
// the cloud no longer holds, or one that served a load balancer before
// (or did not exist) and serves none now.
func checkCompanions(t *testing.T, s *suite, before map[string]string, op fuzzOp) {
	t.Helper()
	lbs := map[string]bool{}
	for _, lb := range s.target.Cloud.LoadBalancers() {
		lbs[lb.ID] = true
	}
	after := companions(s.target.Cloud)
	for _, kind := range slices.Sorted(maps.Keys(after)) {
		lb := after[kind]
		was, existed := before[kind]
		switch {
		case lb != "" && !lbs[lb]:
			t.Errorf("after the mutated %s and a clean run, %s serves load balancer %s, which is gone", op, kind, lb)
		case lb == "" && (!existed || was != ""):
			t.Errorf("after the mutated %s and a clean run, %s serves no load balancer: leaked", op, kind)
		}
	}
}

// renamed returns md with the names a cloud chooses freely (the instance
// type, zone and region) taken from clean when the case's mutation gave a
// string another value and md carries a name there: a server type or zone
// called "fuzz-unknown-value" is a well-formed answer no client can tell
// from the cloud's, unlike an empty one. To a lookup by name, so is
// another instance ID (c.renamedByName).
func (c responseCase) renamed(clean, md *cloudprovider.InstanceMetadata) *cloudprovider.InstanceMetadata {
	if !c.unknownEnum() {
		return md
	}
	out := *md
	type name struct {
		got   *string
		clean string
	}
	names := []name{{&out.InstanceType, clean.InstanceType}, {&out.Zone, clean.Zone}, {&out.Region, clean.Region}}
	if c.renamedByName() {
		names = append(names, name{&out.ProviderID, clean.ProviderID})
	}
	for _, f := range names {
		if *f.got != "" {
			*f.got = f.clean
		}
	}
	return &out
}

// unknownEnum reports whether the case's mutation gives a string another
// value (simkit.MutateUnknownEnum).
func (c responseCase) unknownEnum() bool {
	return len(c.mutation) > 0 && simkit.MutationKind(c.mutation[0]%byte(simkit.NumMutationKinds)) == simkit.MutateUnknownEnum
}

// renamedByName reports whether the case looks its Node up by name and its
// mutation may have given the instance's name or ID another value: the
// answer then holds no instance of that name, or another instance of it,
// which is a well-formed answer no client can tell from the cloud's (the
// instance was renamed, or replaced). Lookups by ID stay strict.
func (c responseCase) renamedByName() bool {
	return c.flags&flagByName != 0 && c.unknownEnum()
}

// renamedTargets reports whether got is clean with instances renamed by
// an unknown-enum mutation: a renamed instance is a well-formed answer,
// and its routes name its new name.
func (c responseCase) renamedTargets(clean, got map[string]types.NodeName) bool {
	if !c.unknownEnum() || len(clean) != len(got) {
		return false
	}
	for dst, node := range clean {
		if g, ok := got[dst]; !ok || (node == "") != (g == "") {
			return false
		}
	}
	return true
}

// String names the case in the test log.
func (c responseCase) String() string {
	return fmt.Sprintf("%s, answer %d mutated by %x", c.op, c.nth, c.mutation)
}

// nodesFor are the Nodes the Service's load balancer has before the
// mutated operation, and should have after it.
func nodesFor(op fuzzOp, nodes []*corev1.Node) (before, after []*corev1.Node) {
	if op == opEnsureUpdate {
		return nodes[:2], nodes[1:]
	}
	return nodes[:2], nodes[:2]
}

// heldBy is the metadata node holds: its providerID, addresses and
// well-known labels.
func heldBy(node *corev1.Node) *cloudprovider.InstanceMetadata {
	return &cloudprovider.InstanceMetadata{
		ProviderID: node.Spec.ProviderID, NodeAddresses: node.Status.Addresses,
		InstanceType: node.Labels[corev1.LabelInstanceTypeStable],
		Zone:         node.Labels[corev1.LabelTopologyZone], Region: node.Labels[corev1.LabelTopologyRegion],
	}
}

// essential is what of md a cloud always answers: the providerID, type,
// zone, region and IP addresses. DNS names, the hostname and labels come
// from fields a cloud may leave out (CloudAPI's dns_names without CNS),
// so an answer without them is no half answer.
func essential(md *cloudprovider.InstanceMetadata) *cloudprovider.InstanceMetadata {
	out := &cloudprovider.InstanceMetadata{ProviderID: md.ProviderID, InstanceType: md.InstanceType, Zone: md.Zone, Region: md.Region}
	for _, a := range md.NodeAddresses {
		if a.Type == corev1.NodeInternalIP || a.Type == corev1.NodeExternalIP {
			out.NodeAddresses = append(out.NodeAddresses, a)
		}
	}
	return out
}

package soak

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"time"
)

// Kind is what one operation of a plan does.
type Kind string

// The kinds of operation a plan holds.
const (
	// Service operations.
	CreateService   Kind = "service-create"
	ChangePorts     Kind = "service-ports"
	SetAnnotation   Kind = "annotation-valid"
	BreakAnnotation Kind = "annotation-invalid"
	FixAnnotation   Kind = "annotation-fix"
	TrafficPolicy   Kind = "traffic-policy"
	SourceRanges    Kind = "source-ranges"
	ToClusterIP     Kind = "type-clusterip"
	ToLoadBalancer  Kind = "type-loadbalancer"
	DeleteService   Kind = "service-delete"
	// Node and VM operations.
	NodeJoin   Kind = "node-join"
	NodeLeave  Kind = "node-leave"
	VMDelete   Kind = "vm-delete"
	VMShutdown Kind = "vm-shutdown"
	// Fault windows: every cloud request fails (or waits) for Duration.
	Storm429     Kind = "window-429"
	LatencySpike Kind = "window-latency"
	Window401    Kind = "window-401"
	// Leader kills.
	KillNow Kind = "kill-now"
	KillMid Kind = "kill-mid-reconcile"
)

// Port is one Service port of a plan.
type Port struct {
	Port     int32  `json:"port"`
	Protocol string `json:"protocol"` // TCP or UDP
}

// Op is one operation of a plan.
type Op struct {
	Kind Kind `json:"kind"`
	// Service or Node the operation acts on.
	Service string `json:"service,omitempty"`
	Node    string `json:"node,omitempty"`
	// Ports of a created Service or of a port change.
	Ports []Port `json:"ports,omitempty"`
	// Key and Value of an annotation set.
	Key   string `json:"key,omitempty"`
	Value string `json:"value,omitempty"`
	// Policy is the externalTrafficPolicy set (Cluster or Local).
	Policy string `json:"policy,omitempty"`
	// Ranges are the loadBalancerSourceRanges set; none clears them.
	Ranges []string `json:"ranges,omitempty"`
	// Duration of a fault window.
	Duration time.Duration `json:"duration,omitempty"`
	// Rate is the fraction of requests a latency spike delays.
	Rate float64 `json:"rate,omitempty"`
	// Method is the HTTP method whose next request kills the leader
	// mid-reconcile.
	Method string `json:"method,omitempty"`
	// Pause is the wait after the operation.
	Pause time.Duration `json:"pause"`
}

func (o Op) String() string {
	target := o.Service + o.Node
	switch o.Kind {
	case SetAnnotation, BreakAnnotation, FixAnnotation:
		return fmt.Sprintf("%s %s %s=%q", o.Kind, target, o.Key, o.Value)
	case CreateService, ChangePorts:
		return fmt.Sprintf("%s %s %v", o.Kind, target, o.Ports)
	case TrafficPolicy:
		return fmt.Sprintf("%s %s %s", o.Kind, target, o.Policy)
	case SourceRanges:
		return fmt.Sprintf("%s %s %v", o.Kind, target, o.Ranges)
	case Storm429, LatencySpike, Window401:
		return fmt.Sprintf("%s %s", o.Kind, o.Duration)
	case KillMid:
		return fmt.Sprintf("%s at the next %s", o.Kind, o.Method)
	}
	if target == "" {
		return string(o.Kind)
	}
	return fmt.Sprintf("%s %s", o.Kind, target)
}

// Capabilities are what the provider's load balancers accept
// (cluster.SoakSupport), as the plan needs them.
type Capabilities struct {
	UDP          bool
	SourceRanges bool
	Valid        map[string][]string
	Invalid      map[string]string
}

// PlanSpec is what a plan is drawn from.
type PlanSpec struct {
	Seed  uint64
	Ops   int
	Kills int
	// InitialNodes are the Nodes the run starts with (named node-0...).
	InitialNodes int
	Caps         Capabilities
}

// planState is what the plan knows of the cluster while drawing: it keeps
// every operation meaningful (a port change on a Service that exists...).
type planState struct {
	rng      *rand.Rand
	caps     Capabilities
	services map[string]*planService
	ready    []string // Nodes whose VM runs
	nextSvc  int
	nextNode int
	// lastBroken is the Service last made invalid.
	lastBroken string
}

type planService struct {
	lb      bool
	invalid string // the invalid annotation key set, "" for none
	ranges  bool   // loadBalancerSourceRanges are set
	local   bool
}

// Plan draws the operations of a run: the same spec gives the same plan.
// Besides spec.Ops operations it holds spec.Kills leader kills, spread
// over the run, alternately "now" and mid-reconcile.
func Plan(spec PlanSpec) []Op {
	st := &planState{
		rng:      rand.New(rand.NewPCG(spec.Seed, 0x50a4)),
		caps:     spec.Caps,
		services: map[string]*planService{},
	}
	for range spec.InitialNodes {
		st.ready = append(st.ready, st.newNode())
	}
	kills := map[int]int{} // op index -> kill number
	for k := range spec.Kills {
		kills[(2*k+1)*spec.Ops/(2*spec.Kills)] = k
	}
	var ops []Op
	for i := range spec.Ops {
		if k, ok := kills[i]; ok {
			ops = append(ops, st.kill(k))
		}
		op := st.next()
		op.Pause = time.Duration(50+st.rng.IntN(250)) * time.Millisecond
		ops = append(ops, op)
	}
	return append(ops, st.tidy()...)
}

// tidy fixes every invalid Service but the last one broken: the end state
// then holds one Service for which only a Warning is required, and every
// other one must match its cloud load balancer.
func (st *planState) tidy() []Op {
	var ops []Op
	for _, name := range keys(st.services) {
		s := st.services[name]
		if name == st.lastBroken {
			continue
		}
		if s.invalid != "" {
			op, _ := st.service(FixAnnotation, name)
			ops = append(ops, op)
		}
		if s.ranges && !st.caps.SourceRanges {
			op, _ := st.service(SourceRanges, name)
			ops = append(ops, op)
		}
	}
	return ops
}

func (st *planState) kill(k int) Op {
	if k%2 == 0 {
		return Op{Kind: KillNow, Pause: 200 * time.Millisecond}
	}
	method := []string{"POST", "PUT", "DELETE"}[st.rng.IntN(3)]
	return Op{Kind: KillMid, Method: method, Pause: 200 * time.Millisecond}
}

// weights of the kinds drawn; a kind that cannot apply now is redrawn.
var weights = []struct {
	kind Kind
	w    int
}{
	{CreateService, 14}, {ChangePorts, 8}, {SetAnnotation, 6}, {BreakAnnotation, 4}, {FixAnnotation, 4},
	{TrafficPolicy, 5}, {SourceRanges, 5}, {ToClusterIP, 3}, {ToLoadBalancer, 3}, {DeleteService, 6},
	{NodeJoin, 5}, {NodeLeave, 3}, {VMDelete, 3}, {VMShutdown, 2},
	{Storm429, 2}, {LatencySpike, 2}, {Window401, 2},
}

func (st *planState) next() Op {
	total := 0
	for _, w := range weights {
		total += w.w
	}
	for {
		n := st.rng.IntN(total)
		for _, w := range weights {
			if n < w.w {
				if op, ok := st.draw(w.kind); ok {
					return op
				}
				break
			}
			n -= w.w
		}
	}
}

func (st *planState) draw(kind Kind) (Op, bool) {
	switch kind {
	case CreateService:
		return st.create()
	case NodeJoin, NodeLeave, VMDelete, VMShutdown:
		return st.node(kind)
	case Storm429:
		return Op{Kind: kind, Duration: st.seconds(1, 3)}, true
	case LatencySpike:
		return Op{Kind: kind, Duration: st.seconds(1, 3), Rate: 0.5}, true
	case Window401:
		return Op{Kind: kind, Duration: st.seconds(2, 3)}, true
	}
	return st.service(kind)
}

func (st *planState) seconds(lo, hi int) time.Duration {
	return time.Duration(lo*1000+st.rng.IntN((hi-lo)*1000+1)) * time.Millisecond
}

func (st *planState) create() (Op, bool) {
	if len(st.services) >= 8 {
		return Op{}, false
	}
	name := fmt.Sprintf("svc-%d", st.nextSvc)
	st.nextSvc++
	st.services[name] = &planService{lb: true}
	return Op{Kind: CreateService, Service: name, Ports: st.ports()}, true
}

// ports are 1-3 distinct ports, UDP now and then where the provider has it.
func (st *planState) ports() []Port {
	n := 1 + st.rng.IntN(3)
	var out []Port
	for len(out) < n {
		p := Port{Port: int32(80 + st.rng.IntN(9000)), Protocol: "TCP"}
		if st.caps.UDP && st.rng.IntN(4) == 0 {
			p.Protocol = "UDP"
		}
		if !slices.ContainsFunc(out, func(q Port) bool { return q.Port == p.Port }) {
			out = append(out, p)
		}
	}
	return out
}

// service draws a change to one existing Service that kind can apply to,
// or to the one named.
func (st *planState) service(kind Kind, named ...string) (Op, bool) {
	names := named
	if len(names) == 0 {
		for _, name := range keys(st.services) {
			if st.applies(kind, st.services[name]) {
				names = append(names, name)
			}
		}
	}
	if len(names) == 0 {
		return Op{}, false
	}
	name := names[st.rng.IntN(len(names))]
	s := st.services[name]
	op := Op{Kind: kind, Service: name}
	switch kind {
	case ChangePorts:
		op.Ports = st.ports()
	case SetAnnotation:
		key := pick(st.rng, keys(st.caps.Valid))
		op.Key, op.Value = key, pick(st.rng, st.caps.Valid[key])
		if key == s.invalid { // the same key, now valid
			s.invalid = ""
		}
	case BreakAnnotation:
		key := pick(st.rng, keys(st.caps.Invalid))
		op.Key, op.Value = key, st.caps.Invalid[key]
		s.invalid, st.lastBroken = key, name
	case FixAnnotation:
		op.Key, s.invalid = s.invalid, ""
		if values, ok := st.caps.Valid[op.Key]; ok {
			op.Value = values[0]
		} // else: the annotation is removed
	case TrafficPolicy:
		s.local = !s.local
		op.Policy = map[bool]string{false: "Cluster", true: "Local"}[s.local]
	case SourceRanges:
		s.ranges = !s.ranges
		if s.ranges && !st.caps.SourceRanges {
			st.lastBroken = name
		}
		if s.ranges {
			op.Ranges = []string{fmt.Sprintf("10.%d.0.0/16", st.rng.IntN(256)), "192.0.2.0/24"}
		}
	case ToClusterIP:
		// The fields of a LoadBalancer go with its type.
		s.lb, s.local, s.ranges = false, false, false
	case ToLoadBalancer:
		s.lb = true
	case DeleteService:
		delete(st.services, name)
	}
	return op, true
}

func (st *planState) applies(kind Kind, s *planService) bool {
	switch kind {
	case BreakAnnotation:
		return s.invalid == "" && len(st.caps.Invalid) > 0
	case FixAnnotation:
		return s.invalid != ""
	case SetAnnotation:
		return len(st.caps.Valid) > 0
	case ToClusterIP, TrafficPolicy, SourceRanges:
		return s.lb
	case ToLoadBalancer:
		return !s.lb
	}
	return true
}

// node draws a Node or VM operation, keeping at least two running Nodes
// and at most eight.
func (st *planState) node(kind Kind) (Op, bool) {
	if kind == NodeJoin {
		if len(st.ready) >= 8 {
			return Op{}, false
		}
		name := st.newNode()
		st.ready = append(st.ready, name)
		return Op{Kind: kind, Node: name}, true
	}
	if len(st.ready) <= 2 {
		return Op{}, false
	}
	i := st.rng.IntN(len(st.ready))
	name := st.ready[i]
	st.ready = slices.Delete(st.ready, i, i+1)
	return Op{Kind: kind, Node: name}, true
}

func (st *planState) newNode() string {
	name := fmt.Sprintf("node-%d", st.nextNode)
	st.nextNode++
	return name
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func pick[T any](rng *rand.Rand, from []T) T { return from[rng.IntN(len(from))] }

package soak

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// Snapshot is what the invariants look at: the API server's Nodes and
// Services, the simulated cloud, and the soak's own record of what it did.
type Snapshot struct {
	Nodes    []Node
	Services []Service
	// LoadBalancers are the cloud's (Sim.LoadBalancers).
	LoadBalancers []simkit.LoadBalancer
	// Companions and Baseline are the cloud's load balancer companions now
	// and before the run (simkit.CompanionLister); nil for a cloud
	// without.
	Companions, Baseline map[string]string
	// CompanionNames are the Companions' names (simkit.CompanionNamer);
	// nil for a cloud that does not give them.
	CompanionNames map[string]string
	Record         Record
}

// Node is a Node as the invariants need it.
type Node struct {
	Name string
	// Initialized: the CCM removed the uninitialized taint.
	Initialized bool
	// Excluded: labelled node.kubernetes.io/exclude-from-external-load-balancers.
	Excluded bool
	// ShutdownTaint: tainted node.cloudprovider.kubernetes.io/shutdown.
	ShutdownTaint bool
}

// Service is a Service as the invariants need it.
type Service struct {
	Name string
	// LBName is the Service's default load-balancer name
	// (cloudprovider.DefaultLoadBalancerName), which the provider's names
	// of its load balancer and companions hold.
	LBName       string
	LoadBalancer bool // of type LoadBalancer
	// LBID is the provider's load balancer ID annotation, "" when unset.
	LBID  string
	Ports []ServicePort
	// Ingress are status.loadBalancer.ingress's IPs and hostnames, sorted.
	Ingress []string
	// Invalid says why the Service's spec is one the provider must reject
	// (an invalid annotation, unsupported source ranges), "" when valid.
	Invalid string
	// Warned: a Warning Event of the Service names what makes it invalid.
	Warned bool
}

// ServicePort is one port of a Service.
type ServicePort struct {
	Port, NodePort int32
}

// Record is what the soak did that the cluster cannot tell.
type Record struct {
	// VMs are the cloud IDs of the VMs the soak created, by Node name.
	VMs map[string]string
	// VMsDeleted and VMsShutdown are the Nodes whose VM the soak deleted
	// or shut down; NodesDeleted are the Nodes it deleted itself.
	VMsDeleted, VMsShutdown, NodesDeleted map[string]bool
	// NodeDeletions are the Node deletions seen during the whole run, in
	// order, whoever made them.
	NodeDeletions []string
}

// Violation is one broken invariant, in words.
type Violation struct {
	Invariant string `json:"invariant"`
	Detail    string `json:"detail"`
}

func (v Violation) String() string { return v.Invariant + ": " + v.Detail }

// The invariants.
const (
	InvNodeDeleted     = "no Node deleted whose VM exists"
	InvGoneVMNode      = "every Node whose VM is gone is deleted"
	InvShutdownNode    = "every Node whose VM is shut down stays, tainted"
	InvOneLB           = "each LoadBalancer Service has exactly one cloud LB"
	InvListeners       = "the LB's listeners match the Service's ports"
	InvMembers         = "the LB's members are the eligible Nodes"
	InvOrphanLB        = "no cloud LB without a Service"
	InvOrphanCompanion = "no companion without a live LB"
	InvStatus          = "the Service's ingress is the LB's addresses"
	InvNotLB           = "a Service not of type LoadBalancer has no ingress and no LB"
	InvInvalidWarned   = "an invalid Service gets a Warning Event"
	InvNoPanic         = "no CCM replica panics"
)

// Check returns every invariant s breaks, in a stable order.
func Check(s Snapshot) []Violation {
	var out []Violation
	add := func(inv, format string, args ...any) {
		out = append(out, Violation{inv, fmt.Sprintf(format, args...)})
	}
	checkNodes(s, add)
	lbs := map[string]simkit.LoadBalancer{}
	count := map[string]int{}
	for _, lb := range s.LoadBalancers {
		lbs[lb.ID] = lb
		count[lb.ID]++
	}
	named := map[string]bool{}
	for _, svc := range s.Services {
		named[svc.LBID] = svc.LBID != ""
		checkService(s, svc, lbs, count, add)
	}
	for _, lb := range s.LoadBalancers {
		if !named[lb.ID] {
			add(InvOrphanLB, "load balancer %s (%s) is named by no Service's ID annotation", lb.ID, lb.Name)
		}
	}
	for _, c := range keys(s.Companions) {
		if _, old := s.Baseline[c]; old {
			continue
		}
		if lb := s.Companions[c]; (lb == "" || count[lb] == 0) && !keptForRefused(s, lbs, c) {
			add(InvOrphanCompanion, "%s serves load balancer %q, which does not exist", c, lb)
		}
	}
	return out
}

// keptForRefused reports whether companion c, which serves no load
// balancer, is named for the load balancer of a LoadBalancer Service
// refused (invalid) before c was put to use: a create that failed after
// making c, or a load balancer made but not yet set up (a Brightbox
// cloud IP allocated by the create, which the first update maps). The
// last good state stays while the Service is refused (no cloud write);
// its next valid sync adopts c, its deletion removes it. A companion is
// named for the Service's load balancer when its name holds the Service's
// default load-balancer name, or the name of the load balancer the
// Service's ID annotation names (a cloud that names its load balancers
// otherwise, as Brightbox does).
func keptForRefused(s Snapshot, lbs map[string]simkit.LoadBalancer, c string) bool {
	name := s.CompanionNames[c]
	return name != "" && slices.ContainsFunc(s.Services, func(svc Service) bool {
		if !svc.LoadBalancer || svc.Invalid == "" {
			return false
		}
		lbName := lbs[svc.LBID].Name
		return svc.LBName != "" && strings.Contains(name, svc.LBName) || lbName != "" && strings.Contains(name, lbName)
	})
}

type addFunc func(inv, format string, args ...any)

func checkNodes(s Snapshot, add addFunc) {
	nodes := map[string]Node{}
	for _, n := range s.Nodes {
		nodes[n.Name] = n
	}
	reported := map[string]bool{}
	for _, name := range s.Record.NodeDeletions {
		if !s.Record.NodesDeleted[name] && !s.Record.VMsDeleted[name] && !reported[name] {
			reported[name] = true
			add(InvNodeDeleted, "Node %s was deleted though its VM %s exists", name, s.Record.VMs[name])
		}
	}
	for _, name := range keys(s.Record.VMsDeleted) {
		if _, ok := nodes[name]; ok {
			add(InvGoneVMNode, "Node %s stays though its VM %s was deleted", name, s.Record.VMs[name])
		}
	}
	for _, name := range keys(s.Record.VMsShutdown) {
		if s.Record.NodesDeleted[name] || s.Record.VMsDeleted[name] {
			continue
		}
		n, ok := nodes[name]
		switch {
		case !ok:
			add(InvShutdownNode, "Node %s is gone though its VM %s is only shut down", name, s.Record.VMs[name])
		case !n.ShutdownTaint:
			add(InvShutdownNode, "Node %s (VM %s shut down) has no shutdown taint", name, s.Record.VMs[name])
		}
	}
}

func checkService(s Snapshot, svc Service, lbs map[string]simkit.LoadBalancer, count map[string]int, add addFunc) {
	if !svc.LoadBalancer {
		if len(svc.Ingress) > 0 {
			add(InvNotLB, "Service %s is not of type LoadBalancer but has ingress %v", svc.Name, svc.Ingress)
		}
		if count[svc.LBID] > 0 {
			add(InvNotLB, "Service %s is not of type LoadBalancer but load balancer %s stays", svc.Name, svc.LBID)
		}
		return
	}
	if svc.Invalid != "" {
		// The last good state stays: only the Warning is required.
		if !svc.Warned {
			add(InvInvalidWarned, "Service %s (%s) got no Warning Event", svc.Name, svc.Invalid)
		}
		if svc.LBID != "" && count[svc.LBID] != 1 {
			add(InvOneLB, "Service %s (invalid: %s) names load balancer %s, which the cloud holds %d times", svc.Name, svc.Invalid, svc.LBID, count[svc.LBID])
		}
		return
	}
	if svc.LBID == "" || count[svc.LBID] != 1 {
		add(InvOneLB, "Service %s names load balancer %q, which the cloud holds %d times", svc.Name, svc.LBID, count[svc.LBID])
		return
	}
	lb := lbs[svc.LBID]
	if got, want := listenerPorts(lb.Listeners), servicePorts(svc.Ports); !slices.Equal(got, want) {
		add(InvListeners, "Service %s: load balancer %s listens on %v, want %v", svc.Name, lb.ID, got, want)
	}
	must, may := eligible(s)
	for _, m := range lb.Members {
		if !may[m] {
			add(InvMembers, "Service %s: load balancer %s has member %s, which is no eligible Node's VM", svc.Name, lb.ID, m)
		}
	}
	for _, id := range keys(must) {
		if !slices.Contains(lb.Members, id) {
			add(InvMembers, "Service %s: load balancer %s lacks eligible Node %s's VM %s", svc.Name, lb.ID, must[id], id)
		}
	}
	if ingress := sorted(svc.Ingress); !slices.Equal(ingress, sorted(lb.Addresses)) {
		add(InvStatus, "Service %s: ingress %v, load balancer %s has addresses %v", svc.Name, ingress, lb.ID, lb.Addresses)
	}
}

// eligible are the VM IDs that must be behind every load balancer (by ID,
// the Node name) and those that may (must, plus shut-down VMs).
func eligible(s Snapshot) (must map[string]string, may map[string]bool) {
	must, may = map[string]string{}, map[string]bool{}
	for _, n := range s.Nodes {
		id, ok := s.Record.VMs[n.Name]
		if !ok || !n.Initialized || n.Excluded || s.Record.VMsDeleted[n.Name] {
			continue
		}
		may[id] = true
		if !s.Record.VMsShutdown[n.Name] {
			must[id] = n.Name
		}
	}
	return must, may
}

// listenerPorts are "port->:nodePort" of listeners written as
// simkit.FormatListener does, sorted and without duplicates (a port may
// have a listener per protocol).
func listenerPorts(listeners []string) []string {
	out := make([]string, 0, len(listeners))
	for _, l := range listeners {
		_, rest, ok := strings.Cut(l, ":")
		if !ok {
			rest = l
		}
		out = append(out, rest)
	}
	sort.Strings(out)
	return slices.Compact(out)
}

func servicePorts(ports []ServicePort) []string {
	out := make([]string, 0, len(ports))
	for _, p := range ports {
		out = append(out, fmt.Sprintf("%d->:%d", p.Port, p.NodePort))
	}
	sort.Strings(out)
	return slices.Compact(out)
}

func sorted(s []string) []string {
	out := slices.Clone(s)
	sort.Strings(out)
	return out
}

// summary says what s holds, in a few figures.
func (s Snapshot) summary() string {
	lbServices := 0
	for _, svc := range s.Services {
		if svc.LoadBalancer {
			lbServices++
		}
	}
	return fmt.Sprintf("%d Nodes, %d Services (%d LoadBalancer), %d cloud LBs, %d companions (%d before the run), %d Node deletions",
		len(s.Nodes), len(s.Services), lbServices, len(s.LoadBalancers), len(s.Companions), len(s.Baseline), len(s.Record.NodeDeletions))
}

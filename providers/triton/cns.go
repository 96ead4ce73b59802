package triton

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// This file holds what the provider knows of Triton's Container Name
// Service (CNS, triton-cns docs/metadata.md): the service names it builds
// for Services, and the triton.cns.services tag they go in, which it edits
// without losing the entries others put there. It makes no API calls.

// CNS tag and metadata keys.
const (
	// cnsServicesTag is the machine tag listing the CNS services a machine
	// joins: "svc[:port][:key=value]*", comma-separated.
	cnsServicesTag = "triton.cns.services"
	// cnsStatusMetadata is the machine metadata that takes a machine out
	// of every service record when it is not "up" (drain.go).
	cnsStatusMetadata = "triton.cns.status"
)

// Ownership tags on the machines the provider creates or edits. VMAPI
// rejects tags under triton. that it does not know, so these are plain
// keys.
const (
	// clusterTag marks a machine the cluster uses: the Moirai appliances,
	// every node whose triton.cns.services the provider edited, and every
	// Node's machine the firewall controller saw (its rules allow traffic
	// among them), so one filtered list finds them all again.
	clusterTag = "k8s-cluster"
	// serviceUIDTag marks a Moirai appliance with its Service's UID.
	serviceUIDTag = "k8s-service-uid"
)

// cnsLabelPattern is CNS's dns-label: a service name.
var cnsLabelPattern = regexp.MustCompile(`^[a-z][a-z0-9-]{0,62}$`)

// maxCNSLabel is the longest DNS label.
const maxCNSLabel = 63

// cnsLabel is the CNS service name of a Service: k8s-<cluster>-<namespace>-
// <name>, lower-cased, with every character CNS does not allow made a
// hyphen. Service names are account-wide, so the cluster is part of it;
// one longer than a DNS label keeps its first 52 characters and ends in
// a hash of the whole name, so that it stays unique.
func cnsLabel(cluster string, svc *corev1.Service) string {
	return cnsName("k8s-" + cluster + "-" + svc.Namespace + "-" + svc.Name)
}

// nodeServiceLabel is the CNS service every node of the cluster's Moirai
// load balancers joins: the one set (unless TRITON_LB_NODE_SERVICE names
// it) is k8s-<cluster>-nodes.
func nodeServiceLabel(s *LoadBalancerSettings, cluster string) string {
	if s.NodeService != "" {
		return s.NodeService
	}
	return cnsName("k8s-" + cluster + "-nodes")
}

// cnsName makes s a CNS service name (see cnsLabel).
func cnsName(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	name := b.String()
	if len(name) <= maxCNSLabel {
		return strings.TrimRight(name, "-")
	}
	sum := sha256.Sum256([]byte(s))
	return strings.TrimRight(name[:maxCNSLabel-11], "-") + "-" + hex.EncodeToString(sum[:])[:10]
}

// cnsHostname is the DNS name of a CNS service in a zone.
func cnsHostname(label, accountID, zone string) string {
	return label + ".svc." + accountID + "." + zone
}

// cnsEntry is one entry of a triton.cns.services tag, as written.
type cnsEntry string

// label is the service name the entry joins.
func (e cnsEntry) label() string {
	l, _, _ := strings.Cut(string(e), ":")
	return strings.TrimSpace(l)
}

// parseCNSServices splits a triton.cns.services value into its entries,
// dropping empty ones; the entries are kept as written.
func parseCNSServices(value []string) []cnsEntry {
	var out []cnsEntry
	for _, v := range value {
		for e := range strings.SplitSeq(v, ",") {
			if e = strings.TrimSpace(e); e != "" {
				out = append(out, cnsEntry(e))
			}
		}
	}
	return out
}

// cnsEntriesIn returns the entries of label in a triton.cns.services value,
// as cnsEntriesOf(parseCNSServices(value), label) but without making the
// others: every node carries every Service's entries, and a sync of one
// Service reads every node's (5,000 nodes of 1,000 Services: 5 million
// entries a sync, of which 5,000 are its own).
func cnsEntriesIn(value []string, label string) []cnsEntry {
	var out []cnsEntry
	for _, v := range value {
		for e := range strings.SplitSeq(v, ",") {
			if e = strings.TrimSpace(e); e != "" && cnsEntry(e).label() == label {
				out = append(out, cnsEntry(e))
			}
		}
	}
	return out
}

// cnsPortEntries are the entries that put a machine in service label with
// each of ports (SRV records carry the port), in port order.
func cnsPortEntries(label string, ports []int32) []cnsEntry {
	ports = slices.Clone(ports)
	slices.Sort(ports)
	ports = slices.Compact(ports)
	out := make([]cnsEntry, 0, len(ports))
	for _, p := range ports {
		out = append(out, cnsEntry(label+":"+strconv.Itoa(int(p))))
	}
	return out
}

// withCNSEntries returns have with every entry of label replaced by want:
// the entries of other labels (the user's own, other Services') stay as
// they are and where they are, want's are appended. want empty removes
// the label.
func withCNSEntries(have []cnsEntry, label string, want []cnsEntry) []cnsEntry {
	out := slices.DeleteFunc(slices.Clone(have), func(e cnsEntry) bool { return e.label() == label })
	return append(out, want...)
}

// cnsEntriesOf returns the entries of have that join label.
func cnsEntriesOf(have []cnsEntry, label string) []cnsEntry {
	var out []cnsEntry
	for _, e := range have {
		if e.label() == label {
			out = append(out, e)
		}
	}
	return out
}

// formatCNSServices is the tag value of entries.
func formatCNSServices(entries []cnsEntry) string {
	s := make([]string, len(entries))
	for i, e := range entries {
		s[i] = string(e)
	}
	return strings.Join(s, ",")
}

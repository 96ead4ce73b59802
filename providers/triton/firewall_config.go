package triton

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Defaults of the firewall controller's settings.
const (
	// defaultNodePortRange is kube-apiserver's --service-node-port-range.
	defaultNodePortRange = "30000-32767"
	// defaultFirewallResync is how often the rules are read again, so a
	// rule deleted or edited outside the CCM is put back.
	defaultFirewallResync = 5 * time.Minute
)

// FirewallSettings are the firewall controller's settings, part of Config.
// The controller (firewall_controller.go) always keeps the rules that let
// the cluster's machines reach each other; these settings add the public
// NodePort rule and turn the nodes' firewalls on.
type FirewallSettings struct {
	NodePortsPublic bool          `json:"nodePortsPublic" env:"TRITON_FIREWALL_NODEPORTS_PUBLIC" doc:"Keep a Cloud Firewall rule opening the nodes' NodePorts (TRITON_FIREWALL_NODEPORT_RANGE, TCP) to anyone: FROM any TO tag \"k8s-cluster\" = \"<cluster>\". Off: the rule is deleted, and only the cluster's own machines (its load-balancer appliances among them) reach the NodePorts of a node whose firewall is on."`
	NodePortRange   string        `json:"nodePortRange" env:"TRITON_FIREWALL_NODEPORT_RANGE" default:"30000-32767" doc:"The NodePort range the public NodePort rule opens, <first>-<last>: kube-apiserver's --service-node-port-range."`
	EnableNodes     bool          `json:"enableNodes" env:"TRITON_FIREWALL_ENABLE_NODES" doc:"Turn the Cloud Firewall on (firewall_enabled) on every node's machine, once the cluster's rules exist. Then only what a rule allows reaches the nodes: the cluster's machines, the public NodePorts when TRITON_FIREWALL_NODEPORTS_PUBLIC is on, and the rules the account's users wrote (SSH, the API server's port...). The controller never turns a firewall off: with this setting off, the nodes' firewalls are left as they are."`
	Resync          time.Duration `json:"resync" env:"TRITON_FIREWALL_RESYNC" default:"5m" doc:"How often the firewall controller reads the rules again and puts back one deleted or changed outside the CCM (it also syncs when a Node joins or leaves)."`
}

// validate checks what the tags cannot.
func (s *FirewallSettings) validate() error {
	var errs []error
	if _, _, err := s.nodePorts(); err != nil {
		errs = append(errs, err)
	}
	if s.Resync < 0 || s.Resync > 0 && s.Resync < time.Second {
		errs = append(errs, fmt.Errorf("TRITON_FIREWALL_RESYNC: %s is not a period of a second or more", s.Resync))
	}
	return errors.Join(errs...)
}

// nodePorts is NodePortRange parsed (the default when unset): the first
// and last port, 1 <= first <= last <= 65535.
func (s *FirewallSettings) nodePorts() (first, last int, err error) {
	r := s.NodePortRange
	if r == "" {
		r = defaultNodePortRange
	}
	lo, hi, ok := strings.Cut(r, "-")
	first, errLo := strconv.Atoi(strings.TrimSpace(lo))
	last, errHi := strconv.Atoi(strings.TrimSpace(hi))
	if !ok || errLo != nil || errHi != nil || first < 1 || last > 65535 || first > last {
		return 0, 0, fmt.Errorf("TRITON_FIREWALL_NODEPORT_RANGE: %q is not a port range <first>-<last> (1 <= first <= last <= 65535), such as %s", s.NodePortRange, defaultNodePortRange)
	}
	return first, last, nil
}

// resync is Resync, or its default when unset.
func (s *FirewallSettings) resync() time.Duration {
	if s.Resync <= 0 {
		return defaultFirewallResync
	}
	return s.Resync
}

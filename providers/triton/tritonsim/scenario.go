package tritonsim

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// Scenario describes a simulated Triton in YAML (or JSON): what it holds
// when it starts and how it misbehaves. Every field is optional:
//
//	provider: triton              # "" or "triton"; cmd/cloudsim picks the simulator by it
//	description: three workers and a Moirai load balancer
//	account: ccmkit               # the login (TRITON_ACCOUNT)
//	accountID: 9f1c...            # the account's UUID, which CNS names hold; default derived from the seed
//	keyFile: /tmp/ccmkit.pem      # where the account key is written; TRITON_KEY_MATERIAL is this path
//	                              # (default: tritonsim-<account>.pem in the temporary directory); CMON's
//	                              # CA certificate goes next to it (/tmp/ccmkit-cmon-ca.pem)
//	keyName: ccm                  # the account key's name in ListKeys; default account-key
//	keys:                         # more keys of the account, each signing as the account key does
//	- {name: ops, publicKey: "ssh-ed25519 AAAA... ops@example.com"}
//	- {name: ci, generate: ed25519}             # rsa, ecdsa or ed25519; written to /tmp/ccmkit-ci.pem
//	- {name: backup, privateKey: "-----BEGIN OPENSSH PRIVATE KEY-----\n..."}
//	limits:                       # provisioning limits (GET /{account}/limits); creates over one get 403
//	- {by: machines, value: 20}
//	- {by: ram, value: 65536, check: os, os: smartos}   # by machines, ram (MiB) or quota (GiB)
//	datacenter: us-east-1
//	cnsEnabled: false             # the account's triton_cns_enabled; default true
//	cnsPublicZone: us-east-1.triton.zone
//	cnsPrivateZone: us-east-1.cns.joyent.com
//	noLoadBalancerImage: true     # leave the cloud-load-balancer image out
//	seed: 42                      # seeds fault rates and IDs, so runs repeat
//	latency: 30ms                 # added to every API request (not /_sim)
//	provisioningReads: 2          # reads until a machine or an action's job settles; -1: at once
//	settleAfter: 2s               # and it settles that long after it started, read or not
//	                              # (default: cmd/cloudsim's --settle-after; 0s: only on reads)
//	goneReads: 3                  # GETs a deleted machine answers 410 for; -1: none
//	networks:                     # besides Joyent-SDC-Public and My-Fabric-Network
//	- {name: k8s-fabric, fabric: true, vlan: 3, subnet: 10.50.0.0/16, gateway: 10.50.0.1,
//	   provisionStartIP: 10.50.0.5, provisionEndIP: 10.50.255.250}
//	packages:                     # besides the g4 ones
//	- {name: k4-highcpu-kvm-3.75G, memory: 3840, disk: 102400, vcpus: 2, brand: kvm}
//	images:                       # besides base-64-lts and cloud-load-balancer
//	- {name: ubuntu-24.04, version: "20250101", os: linux, type: zvol}
//	machines:
//	- name: worker-1              # machines are referred to by name or ID
//	  id: 1f4e...                 # default: generated
//	  package: g4-highcpu-4G      # default g4-highcpu-1G
//	  image: base-64-lts          # by name or ID; default base-64-lts
//	  state: stopped              # default running
//	  networks: [Joyent-SDC-Public, k8s-fabric]   # by name or ID; default public + My-Fabric-Network
//	  tags: {k8s-cluster: c1, triton.cns.services: "k8s-c1-nodes"}
//	  metadata: {triton.cns.status: down}
//	  firewallEnabled: true
//	fwrules:
//	- {rule: 'FROM any TO tag "k8s-cluster" = "c1" ALLOW tcp PORTS 30000 - 32767', enabled: true}
//	faults:                       # see simkit.ScenarioFault; operation "*", an endpoint or a short name
//	- {operation: machines.list, status: 429, rate: 0.1}
//
// Short operation names: see Operations.
type Scenario struct {
	// ScenarioHeader holds provider, description, seed, latency,
	// provisioningReads, settleAfter and faults.
	simkit.ScenarioHeader
	Account             string            `json:"account,omitempty"`
	AccountID           string            `json:"accountID,omitempty"`
	KeyFile             string            `json:"keyFile,omitempty"`
	KeyName             string            `json:"keyName,omitempty"`
	Keys                []ScenarioKey     `json:"keys,omitempty"`
	Limits              []Limit           `json:"limits,omitempty"`
	Datacenter          string            `json:"datacenter,omitempty"`
	CNSEnabled          *bool             `json:"cnsEnabled,omitempty"`
	CNSPublicZone       string            `json:"cnsPublicZone,omitempty"`
	CNSPrivateZone      string            `json:"cnsPrivateZone,omitempty"`
	NoLoadBalancerImage bool              `json:"noLoadBalancerImage,omitempty"`
	GoneReads           int               `json:"goneReads,omitempty"`
	Networks            []ScenarioNetwork `json:"networks,omitempty"`
	Packages            []Package         `json:"packages,omitempty"`
	Images              []Image           `json:"images,omitempty"`
	Machines            []ScenarioMachine `json:"machines,omitempty"`
	FirewallRules       []FirewallRule    `json:"fwrules,omitempty"`
}

// ScenarioNetwork is a network of a Scenario.
type ScenarioNetwork struct {
	Name             string `json:"name"`
	ID               string `json:"id,omitempty"`
	Public           bool   `json:"public,omitempty"`
	Fabric           bool   `json:"fabric,omitempty"`
	VLAN             int    `json:"vlan,omitempty"`
	Subnet           string `json:"subnet,omitempty"`
	Gateway          string `json:"gateway,omitempty"`
	ProvisionStartIP string `json:"provisionStartIP,omitempty"`
	ProvisionEndIP   string `json:"provisionEndIP,omitempty"`
	InternetNAT      bool   `json:"internetNAT,omitempty"`
}

// ScenarioMachine is a machine of a Scenario; image and networks by name
// or ID.
type ScenarioMachine struct {
	Name            string            `json:"name"`
	ID              string            `json:"id,omitempty"`
	Package         string            `json:"package,omitempty"`
	Image           string            `json:"image,omitempty"`
	State           string            `json:"state,omitempty"`
	Brand           string            `json:"brand,omitempty"`
	Networks        []string          `json:"networks,omitempty"`
	Tags            map[string]any    `json:"tags,omitempty"`
	Metadata        map[string]string `json:"metadata,omitempty"`
	FirewallEnabled bool              `json:"firewallEnabled,omitempty"`
}

// ScenarioFault is a fault of a Scenario.
type ScenarioFault = simkit.ScenarioFault

// Operations are the short names of the endpoints, for scenario faults.
var Operations = map[string]string{
	"account.get":      "GET /{account}",
	"limits.get":       "GET /{account}/limits",
	"keys.list":        "GET /{account}/keys",
	"keys.get":         "GET /{account}/keys/{name}",
	"machines.audit":   "GET /{account}/machines/{id}/audit",
	"machines.list":    "GET /{account}/machines",
	"machines.count":   "HEAD /{account}/machines",
	"machines.create":  "POST /{account}/machines",
	"machines.get":     "GET /{account}/machines/{id}",
	"machines.action":  "POST /{account}/machines/{id}",
	"machines.delete":  "DELETE /{account}/machines/{id}",
	"nics.list":        "GET /{account}/machines/{id}/nics",
	"tags.list":        "GET /{account}/machines/{id}/tags",
	"tags.add":         "POST /{account}/machines/{id}/tags",
	"tags.replace":     "PUT /{account}/machines/{id}/tags",
	"tags.delete":      "DELETE /{account}/machines/{id}/tags/{key}",
	"metadata.list":    "GET /{account}/machines/{id}/metadata",
	"metadata.update":  "POST /{account}/machines/{id}/metadata",
	"networks.list":    "GET /{account}/networks",
	"networks.get":     "GET /{account}/networks/{id}",
	"packages.get":     "GET /{account}/packages/{id}",
	"images.list":      "GET /{account}/images",
	"datacenters.list": "GET /{account}/datacenters",
	"fwrules.list":     "GET /{account}/fwrules",
	"fwrules.create":   "POST /{account}/fwrules",
	"fwrules.update":   "POST /{account}/fwrules/{id}",
	"fwrules.delete":   "DELETE /{account}/fwrules/{id}",
}

// scenarios seeds a Server from a Scenario; the resources are checked by
// seeding a scratch cloud with them.
var scenarios = simkit.Scenarios[Scenario, *Scenario, Options, *Server]{
	Provider:     "triton",
	Operations:   scenarioOperations,
	Check:        (*Scenario).validate,
	New:          New,
	Apply:        (*Scenario).Apply,
	ApplyToCheck: true,
}

// LoadScenario parses a YAML (or JSON) scenario and validates it, reporting
// every problem at once, unknown keys included.
func LoadScenario(data []byte) (*Scenario, error) { return scenarios.Load(data) }

// NewFromScenario returns a Server, not listening yet, seeded from a
// scenario, with the account key written to the scenario's keyFile (by
// default tritonsim-<account>.pem in the temporary directory): a PEM does
// not fit on the one line of a printed variable, so TRITON_KEY_MATERIAL
// is the file's path.
func NewFromScenario(data []byte, defaults ...simkit.ScenarioDefault) (*Server, error) {
	s, err := scenarios.NewServer(data, defaults...)
	if err == nil {
		err = s.WriteKeyFile()
	}
	if err != nil {
		return nil, err
	}
	return s, nil
}

// Validate reports every problem with sc, as LoadScenario does.
func (sc *Scenario) Validate() error { return scenarios.Validate(sc) }

// validate reports every problem with sc's settings.
func (sc *Scenario) validate() []error {
	var errs []error
	if sc.AccountID != "" && !uuidPattern.MatchString(sc.AccountID) {
		errs = append(errs, fmt.Errorf("accountID: %q is not a UUID (lower-case)", sc.AccountID))
	}
	if sc.GoneReads < -1 {
		errs = append(errs, errors.New("goneReads: must be -1 (none), 0 (the default) or more"))
	}
	for i, k := range sc.Keys {
		if err := k.validate(); err != nil {
			errs = append(errs, fmt.Errorf("keys[%d]: %w", i, err))
		}
	}
	for i, l := range sc.Limits {
		if err := l.validate(); err != nil {
			errs = append(errs, fmt.Errorf("limits[%d]: %w", i, err))
		}
	}
	return errs
}

// Options returns the server options sc asks for, the account key kept in
// its keyFile. sc's header must be valid.
func (sc *Scenario) Options() Options {
	return Options{
		Common: sc.Common(scenarioOperations), Account: sc.Account, AccountID: sc.AccountID, KeyFile: sc.keyFile(),
		Datacenter: sc.Datacenter, CNSDisabled: sc.CNSEnabled != nil && !*sc.CNSEnabled, CNSPublicZone: sc.CNSPublicZone,
		CNSPrivateZone: sc.CNSPrivateZone, NoLoadBalancerImage: sc.NoLoadBalancerImage,
		ProvisioningReads: sc.ProvisioningReads, GoneReads: sc.GoneReads, KeyName: sc.KeyName, Limits: sc.Limits,
	}
}

// keyFile is where the account key is written: the scenario's keyFile, by
// default tritonsim-<account>.pem in the temporary directory.
func (sc *Scenario) keyFile() string {
	return cmp.Or(sc.KeyFile, filepath.Join(os.TempDir(), "tritonsim-"+cmp.Or(sc.Account, DefaultAccount)+".pem"))
}

// Apply adds sc's resources to s; it reports the first one the cloud
// refuses.
func (sc *Scenario) Apply(s *Server) error {
	for i, k := range sc.Keys {
		keyFile := cmp.Or(k.KeyFile, strings.TrimSuffix(sc.keyFile(), ".pem")+"-"+k.Name+".pem")
		if err := s.addScenarioKey(k, keyFile); err != nil {
			return fmt.Errorf("keys[%d] (%s): %w", i, k.Name, err)
		}
	}
	for _, n := range sc.Networks {
		s.AddNetwork(Network{ID: n.ID, Name: n.Name, Public: n.Public, Fabric: n.Fabric, VLAN: n.VLAN,
			Subnet: n.Subnet, Gateway: n.Gateway, ProvisionStartIP: n.ProvisionStartIP,
			ProvisionEndIP: n.ProvisionEndIP, InternetNAT: n.InternetNAT})
	}
	for _, p := range sc.Packages {
		s.AddPackage(p)
	}
	for _, img := range sc.Images {
		s.AddImage(img)
	}
	for i, sm := range sc.Machines {
		if err := s.addScenarioMachine(sm); err != nil {
			return fmt.Errorf("machines[%d] (%s): %w", i, sm.Name, err)
		}
	}
	for i, r := range sc.FirewallRules {
		if _, err := s.AddFirewallRule(r); err != nil {
			return fmt.Errorf("fwrules[%d]: %w", i, err)
		}
	}
	return nil
}

func (s *Server) addScenarioMachine(sm ScenarioMachine) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sm.Name == "" {
		return errors.New("name: required")
	}
	if sm.State != "" && !slices.Contains(States, sm.State) {
		return fmt.Errorf("state %q is not one of %v", sm.State, States)
	}
	if err := validateTags(sm.Tags); err != nil {
		return err
	}
	m := Machine{ID: sm.ID, Name: sm.Name, Package: sm.Package, State: sm.State, Brand: sm.Brand,
		Tags: sm.Tags, Metadata: sm.Metadata, FirewallEnabled: sm.FirewallEnabled}
	if sm.Image != "" {
		img, found := s.st.image(sm.Image)
		if !found {
			return fmt.Errorf("image %q does not exist", sm.Image)
		}
		m.Image = img.ID
	}
	for _, n := range sm.Networks {
		m.NICs = append(m.NICs, NIC{Network: n})
	}
	_, err := s.st.addMachine(m)
	return err
}

// image finds an image by ID or name.
func (st *state) image(ref string) (*Image, bool) {
	if img, ok := st.images.Get(ref); ok {
		return img, true
	}
	return st.images.Find(func(img *Image) bool { return img.Name == ref })
}

// scenarioOperations resolves a scenario fault's operation: "*", a short
// name, or an endpoint.
var scenarioOperations = simkit.ServedOperations(Operations, func() []string { return New(Options{}).Operations() })

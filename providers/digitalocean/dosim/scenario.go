package dosim

import (
	"cmp"
	"fmt"
	"net"
	"slices"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// Scenario describes a simulated DigitalOcean in YAML (or JSON): what it
// holds when it starts and how it misbehaves. Every field is optional:
//
//	provider: digitalocean       # "" or "digitalocean"; cmd/cloudsim picks the simulator by it
//	description: three nodes behind a slow API
//	token: my-token              # default: tokens[0], else do-test-token; what cloudsim prints
//	tokens: [ro-token, ci-token] # more tokens of the same team the API accepts too
//	region: nyc3                 # default region of droplets, LBs and Env's REGION
//	seed: 42                     # seeds fault rates, so runs repeat
//	latency: 30ms                # added to every API request (not /_sim)
//	pageSize: 50                 # per_page when a list has none, 1-200 (default 20)
//	provisioningReads: 2         # reads until a new LB is active, a firewall applied, an action done; -1: at once
//	settleAfter: 2s              # and each settles that long after it started, read or not (cloudsim: --settle-after)
//	droplets:
//	- name: node-1               # required
//	  id: 1001                   # default: the next ID from 100000001
//	  size: s-4vcpu-8gb          # default s-2vcpu-4gb; one of GET /v2/sizes
//	  region: sfo3
//	  status: off                # new, active (default), off or archive
//	  tags: [k8s-worker]
//	  vpc: 5a4981aa-…            # vpc_uuid
//	  privateIPv4: 10.1.0.5      # addresses default to ones derived from the ID;
//	  publicIPv4: none           # "none" leaves one out
//	  publicIPv6: 2604:a880::5
//	certificates:
//	- id: cert-1                 # default: generated
//	  name: web
//	  type: lets_encrypt         # custom (default) or lets_encrypt
//	  dnsNames: [example.com]
//	loadBalancers:               # as if created earlier, e.g. by another CCM
//	- id: 4de7ac8b-…             # default: generated
//	  name: a1b2c3
//	  status: active             # new, active (default) or errored
//	  forwardingRules:           # the API's objects
//	  - {entry_protocol: tcp, entry_port: 80, target_protocol: tcp, target_port: 30080}
//	  healthCheck: {protocol: http, port: 10256, path: /healthz}
//	  droplets: [node-1]         # droplet names from this scenario
//	  tag: ""                    # or target droplets by tag
//	  tags: [k8s:cluster-id]
//	  type: REGIONAL_NETWORK
//	  network: EXTERNAL
//	  networkStack: DUALSTACK
//	volumesPerDroplet: 7         # volumes one droplet takes (default 15)
//	volumes:                     # block storage, as if created earlier
//	- name: pgdata               # required: lowercase letters, digits, '-'
//	  size: 100                  # GiB, default 10, at most 16384
//	  region: sfo3               # default: the scenario's region
//	  droplet: node-1            # attached to this droplet of the scenario (same region)
//	  id: 506f78a4-…             # default: generated
//	  description: database
//	  filesystemType: ext4       # ext4 or xfs
//	  filesystemLabel: pgdata
//	  tags: [k8s:abc]
//	faults:                      # see simkit.ScenarioFault; operation "*", an endpoint or a short name
//	- {operation: droplets.list, status: 503, rate: 0.1, retryAfter: 2s, message: maintenance}
//	- {operation: "*", delay: 100ms, count: 3}
//	- {operation: loadBalancers.get, reset: true}
//
// Short operation names: see Operations.
type Scenario struct {
	// ScenarioHeader holds provider, description, seed, latency,
	// provisioningReads and faults.
	simkit.ScenarioHeader
	Token         string                 `json:"token,omitempty"`
	Tokens        []string               `json:"tokens,omitempty"`
	Region        string                 `json:"region,omitempty"`
	PageSize      int                    `json:"pageSize,omitempty"`
	Droplets      []ScenarioDroplet      `json:"droplets,omitempty"`
	Certificates  []ScenarioCertificate  `json:"certificates,omitempty"`
	LoadBalancers []ScenarioLoadBalancer `json:"loadBalancers,omitempty"`
	// VolumesPerDroplet is Options.VolumesPerDroplet.
	VolumesPerDroplet int              `json:"volumesPerDroplet,omitempty"`
	Volumes           []ScenarioVolume `json:"volumes,omitempty"`
}

// ScenarioVolume is a block storage volume of a Scenario.
type ScenarioVolume struct {
	Name            string   `json:"name"`
	ID              string   `json:"id,omitempty"`
	Size            int64    `json:"size,omitempty"`
	Region          string   `json:"region,omitempty"`
	Droplet         string   `json:"droplet,omitempty"`
	Description     string   `json:"description,omitempty"`
	FilesystemType  string   `json:"filesystemType,omitempty"`
	FilesystemLabel string   `json:"filesystemLabel,omitempty"`
	Tags            []string `json:"tags,omitempty"`
}

// ScenarioDroplet is a droplet of a Scenario.
type ScenarioDroplet struct {
	Name        string   `json:"name"`
	ID          int      `json:"id,omitempty"`
	Size        string   `json:"size,omitempty"`
	Region      string   `json:"region,omitempty"`
	Status      string   `json:"status,omitempty"`
	Tags        []string `json:"tags,omitempty"`
	VPC         string   `json:"vpc,omitempty"`
	PrivateIPv4 string   `json:"privateIPv4,omitempty"`
	PublicIPv4  string   `json:"publicIPv4,omitempty"`
	PublicIPv6  string   `json:"publicIPv6,omitempty"`
}

// ScenarioCertificate is a certificate of a Scenario.
type ScenarioCertificate struct {
	ID       string   `json:"id,omitempty"`
	Name     string   `json:"name,omitempty"`
	Type     string   `json:"type,omitempty"`
	DNSNames []string `json:"dnsNames,omitempty"`
}

// ScenarioLoadBalancer is a load balancer of a Scenario.
type ScenarioLoadBalancer struct {
	ID              string           `json:"id,omitempty"`
	Name            string           `json:"name,omitempty"`
	Status          string           `json:"status,omitempty"`
	ForwardingRules []ForwardingRule `json:"forwardingRules,omitempty"`
	HealthCheck     *HealthCheck     `json:"healthCheck,omitempty"`
	Droplets        []string         `json:"droplets,omitempty"`
	Tag             string           `json:"tag,omitempty"`
	Tags            []string         `json:"tags,omitempty"`
	Type            string           `json:"type,omitempty"`
	Network         string           `json:"network,omitempty"`
	NetworkStack    string           `json:"networkStack,omitempty"`
}

// ScenarioFault is a fault of a Scenario.
type ScenarioFault = simkit.ScenarioFault

// Operations are the short names of the endpoints, for scenario faults.
var Operations = map[string]string{
	"account.get":           "GET /v2/account",
	"regions.list":          "GET /v2/regions",
	"droplets.list":         "GET /v2/droplets",
	"droplets.get":          "GET /v2/droplets/{id}",
	"droplets.delete":       "DELETE /v2/droplets/{id}",
	"droplets.firewalls":    "GET /v2/droplets/{id}/firewalls",
	"dropletActions.post":   "POST /v2/droplets/{id}/actions",
	"dropletActions.get":    "GET /v2/droplets/{id}/actions/{action}",
	"actions.get":           "GET /v2/actions/{action}",
	"sizes.list":            "GET /v2/sizes",
	"loadBalancers.list":    "GET /v2/load_balancers",
	"loadBalancers.create":  "POST /v2/load_balancers",
	"loadBalancers.get":     "GET /v2/load_balancers/{id}",
	"loadBalancers.update":  "PUT /v2/load_balancers/{id}",
	"loadBalancers.delete":  "DELETE /v2/load_balancers/{id}",
	"certificates.list":     "GET /v2/certificates",
	"certificates.get":      "GET /v2/certificates/{id}",
	"tags.create":           "POST /v2/tags",
	"tags.tagResources":     "POST /v2/tags/{name}/resources",
	"firewalls.list":        "GET /v2/firewalls",
	"firewalls.create":      "POST /v2/firewalls",
	"firewalls.get":         "GET /v2/firewalls/{id}",
	"firewalls.update":      "PUT /v2/firewalls/{id}",
	"firewalls.delete":      "DELETE /v2/firewalls/{id}",
	"firewalls.addDroplets": "POST /v2/firewalls/{id}/droplets",
	"firewalls.addTags":     "POST /v2/firewalls/{id}/tags",
	"firewalls.addRules":    "POST /v2/firewalls/{id}/rules",
	"volumes.list":          "GET /v2/volumes",
	"volumes.create":        "POST /v2/volumes",
	"volumes.get":           "GET /v2/volumes/{id}",
	"volumes.delete":        "DELETE /v2/volumes/{id}",
	"volumes.deleteByName":  "DELETE /v2/volumes",
	"volumes.actions":       "POST /v2/volumes/{id}/actions",
	"volumes.actionsByName": "POST /v2/volumes/actions",
	"volumeActions.list":    "GET /v2/volumes/{id}/actions",
	"volumeActions.get":     "GET /v2/volumes/{id}/actions/{action}",
	"volumes.snapshots":     "GET /v2/volumes/{id}/snapshots",
	"volumes.snapshot":      "POST /v2/volumes/{id}/snapshots",
	"snapshots.list":        "GET /v2/snapshots",
	"snapshots.get":         "GET /v2/snapshots/{id}",
	"snapshots.delete":      "DELETE /v2/snapshots/{id}",
}

// scenarios seeds a Server from a Scenario.
var scenarios = simkit.Scenarios[Scenario, *Scenario, Options, *Server]{
	Provider:   "digitalocean",
	Operations: scenarioOperations,
	Check:      (*Scenario).validate,
	New:        New,
	Apply:      func(sc *Scenario, s *Server) error { return sc.Apply(s) },
}

// LoadScenario parses a YAML (or JSON) scenario and validates it, reporting
// every problem at once, unknown keys included.
func LoadScenario(data []byte) (*Scenario, error) { return scenarios.Load(data) }

// NewFromScenario returns a Server, not listening yet, seeded from a
// scenario.
func NewFromScenario(data []byte, defaults ...simkit.ScenarioDefault) (*Server, error) {
	return scenarios.NewServer(data, defaults...)
}

// Validate reports every problem with sc, as LoadScenario does.
func (sc *Scenario) Validate() error { return scenarios.Validate(sc) }

// validate reports every problem with what sc holds besides its header.
func (sc *Scenario) validate() []error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if sc.Region != "" && regionNames[sc.Region] == "" {
		bad("region: unknown region %q", sc.Region)
	}
	if sc.PageSize < 0 || sc.PageSize > MaxPerPage {
		bad("pageSize: %d is not between 1 and %d", sc.PageSize, MaxPerPage)
	}
	seen := map[string]bool{sc.Token: sc.Token != ""}
	for i, t := range sc.Tokens {
		switch {
		case t == "":
			bad("tokens[%d]: empty", i)
		case seen[t]:
			bad("tokens[%d]: %q appears twice", i, t)
		}
		seen[t] = true
	}
	names := map[string]string{} // droplet name: region
	for i, d := range sc.Droplets {
		f := fmt.Sprintf("droplets[%d]", i)
		if d.Name == "" {
			bad("%s.name: required", f)
		}
		names[d.Name] = cmp.Or(d.Region, sc.Region, DefaultRegion)
		if !oneOf(d.Status, "", StatusNew, StatusActive, StatusOff, StatusArchive) {
			bad("%s.status: %q is not one of new, active, off, archive", f, d.Status)
		}
		if d.Region != "" && regionNames[d.Region] == "" {
			bad("%s.region: unknown region %q", f, d.Region)
		}
		if _, ok := lookupSize(d.Size); d.Size != "" && !ok {
			bad("%s.size: unknown size %q, want one of %v", f, d.Size, sizeSlugs())
		}
		for field, ip := range map[string]string{"privateIPv4": d.PrivateIPv4, "publicIPv4": d.PublicIPv4, "publicIPv6": d.PublicIPv6} {
			if ip != "" && ip != "none" && net.ParseIP(ip) == nil {
				bad("%s.%s: %q is not an IP address", f, field, ip)
			}
		}
	}
	for i, c := range sc.Certificates {
		if !oneOf(c.Type, "", "custom", "lets_encrypt") {
			bad("certificates[%d].type: %q is not custom or lets_encrypt", i, c.Type)
		}
	}
	for i, lb := range sc.LoadBalancers {
		f := fmt.Sprintf("loadBalancers[%d]", i)
		if !oneOf(lb.Status, "", LBStatusNew, LBStatusActive, LBStatusErrored) {
			bad("%s.status: %q is not one of new, active, errored", f, lb.Status)
		}
		if len(lb.ForwardingRules) == 0 {
			bad("%s.forwardingRules: at least one is required", f)
		}
		for _, n := range lb.Droplets {
			if names[n] == "" {
				bad("%s.droplets: no droplet %q in the scenario", f, n)
			}
		}
	}
	return append(errs, sc.validateVolumes(names)...)
}

// validateVolumes reports every problem with sc's volumes; droplets maps
// the scenario's droplet names to their regions.
func (sc *Scenario) validateVolumes(droplets map[string]string) []error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if sc.VolumesPerDroplet < 0 {
		bad("volumesPerDroplet: %d is negative", sc.VolumesPerDroplet)
	}
	limit := cmp.Or(sc.VolumesPerDroplet, DefaultVolumesPerDroplet)
	seen, attached := map[string]bool{}, map[string]int{}
	for i, v := range sc.Volumes {
		f := fmt.Sprintf("volumes[%d]", i)
		reg := cmp.Or(v.Region, sc.Region, DefaultRegion)
		if !validVolumeName.MatchString(v.Name) {
			bad("%s.name: %q is not 1 to 64 lowercase letters, digits or '-' starting with a letter", f, v.Name)
		}
		if seen[reg+"/"+v.Name] {
			bad("%s.name: %q appears twice in region %s", f, v.Name, reg)
		}
		seen[reg+"/"+v.Name] = true
		if regionNames[reg] == "" {
			bad("%s.region: unknown region %q", f, reg)
		}
		if v.Size < 0 || v.Size > MaxVolumeSize {
			bad("%s.size: %d is not between 1 and %d", f, v.Size, MaxVolumeSize)
		}
		if !oneOf(v.FilesystemType, "", "ext4", "xfs") {
			bad("%s.filesystemType: %q is not ext4 or xfs", f, v.FilesystemType)
		}
		if v.Droplet == "" {
			continue
		}
		switch dr, ok := droplets[v.Droplet]; {
		case !ok:
			bad("%s.droplet: no droplet %q in the scenario", f, v.Droplet)
		case dr != reg:
			bad("%s.droplet: droplet %q is in %s, the volume in %s", f, v.Droplet, dr, reg)
		}
		if attached[v.Droplet]++; attached[v.Droplet] == limit+1 {
			bad("%s.droplet: droplet %q has more than %d volumes", f, v.Droplet, limit)
		}
	}
	return errs
}

// Options returns the server options sc asks for. sc must be valid.
func (sc *Scenario) Options() Options {
	o := Options{
		Common: sc.Common(scenarioOperations), Token: sc.Token, Tokens: sc.Tokens, Region: sc.Region, PerPage: sc.PageSize,
		ProvisioningReads: sc.ProvisioningReads, VolumesPerDroplet: sc.VolumesPerDroplet,
	}
	if o.Token == "" && len(sc.Tokens) > 0 {
		o.Token = sc.Tokens[0]
	}
	return o
}

// Apply adds sc's droplets, certificates, load balancers and volumes to s.
// It fails only when s's Hypervisor fails to make a volume.
func (sc *Scenario) Apply(s *Server) error {
	ids := map[string]int{}
	for _, sd := range sc.Droplets {
		d := Droplet{ID: sd.ID, Name: sd.Name, SizeSlug: sd.Size, Status: sd.Status, Tags: sd.Tags, VPCUUID: sd.VPC}
		if sd.Region != "" {
			d.Region = region(sd.Region)
		}
		d = s.AddDroplet(d)
		if sd.PrivateIPv4 != "" || sd.PublicIPv4 != "" || sd.PublicIPv6 != "" {
			s.setAddresses(d.ID, sd)
		}
		ids[sd.Name] = d.ID
	}
	for _, c := range sc.Certificates {
		s.AddCertificate(Certificate{ID: c.ID, Name: c.Name, Type: c.Type, DNSNames: c.DNSNames})
	}
	for _, sl := range sc.LoadBalancers {
		lb := LoadBalancer{
			ID: sl.ID, Name: sl.Name, Status: sl.Status, ForwardingRules: sl.ForwardingRules,
			HealthCheck: sl.HealthCheck, Tag: sl.Tag, Tags: sl.Tags, Type: sl.Type,
			Network: sl.Network, NetworkStack: sl.NetworkStack,
		}
		for _, n := range sl.Droplets {
			lb.DropletIDs = append(lb.DropletIDs, ids[n])
		}
		s.AddLoadBalancer(lb)
	}
	for _, sv := range sc.Volumes {
		v := Volume{
			ID: sv.ID, Name: sv.Name, SizeGigabytes: sv.Size, Description: sv.Description,
			FilesystemType: sv.FilesystemType, FilesystemLabel: sv.FilesystemLabel, Tags: sv.Tags,
		}
		if reg := cmp.Or(sv.Region, sc.Region); reg != "" {
			v.Region = region(reg)
		}
		if sv.Droplet != "" {
			v.DropletIDs = []int{ids[sv.Droplet]}
		}
		if _, err := s.AddVolume(v); err != nil {
			return err
		}
	}
	return nil
}

// setAddresses overrides a droplet's addresses as a scenario asks.
func (s *Server) setAddresses(id int, sd ScenarioDroplet) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.st.droplets[id]
	set4 := func(typ, ip string) {
		if ip == "" {
			return
		}
		d.Networks.V4 = slices.DeleteFunc(d.Networks.V4, func(n NetworkV4) bool { return n.Type == typ })
		switch {
		case ip == "none":
		case typ == "public":
			d.Networks.V4 = append(d.Networks.V4, publicNetwork(ip))
		default:
			d.Networks.V4 = append(d.Networks.V4, NetworkV4{IPAddress: ip, Netmask: privateNetmask, Type: typ})
		}
	}
	set4("private", sd.PrivateIPv4)
	set4("public", sd.PublicIPv4)
	if sd.PublicIPv6 != "" {
		d.Networks.V6 = []NetworkV6{}
		if sd.PublicIPv6 != "none" {
			d.Networks.V6 = append(d.Networks.V6, NetworkV6{IPAddress: sd.PublicIPv6, Netmask: 64, Type: "public"})
		}
	}
	d.Features = dropletFeatures(d.Networks)
}

// scenarioOperations resolves a scenario fault's operation: "*", a short
// name, or an endpoint.
var scenarioOperations = simkit.ServedOperations(Operations, func() []string { return New(Options{}).Operations() })

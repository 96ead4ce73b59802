package gbsim

import (
	"cmp"
	"crypto/sha256"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// The API's JSON documents, shaped as gobrightbox's testdata: every object
// starts with id, resource_type and url; objects embedded in others are
// their short ("lite") form; unset strings are null.

type ref struct {
	ID           string `json:"id"`
	ResourceType string `json:"resource_type"`
	URL          string `json:"url"`
}

type accountLite struct {
	ref
	Name   string `json:"name"`
	Status string `json:"status"`
}

type zoneJSON struct {
	ref
	Handle string `json:"handle"`
}

type ifaceJSON struct {
	ref
	MACAddress  string      `json:"mac_address"`
	IPv4Address *string     `json:"ipv4_address"`
	IPv6Address *string     `json:"ipv6_address"`
	Server      *serverLite `json:"server,omitempty"`
}

type serverLite struct {
	ref
	Name      string     `json:"name"`
	Status    string     `json:"status"`
	Locked    bool       `json:"locked"`
	Hostname  string     `json:"hostname"`
	FQDN      string     `json:"fqdn"`
	CreatedAt time.Time  `json:"created_at"`
	StartedAt *time.Time `json:"started_at"`
	DeletedAt *time.Time `json:"deleted_at"`
}

type imageLite struct {
	ref
	Name     string `json:"name"`
	Username string `json:"username"`
	Status   string `json:"status"`
	Arch     string `json:"arch"`
	Official bool   `json:"official"`
	Public   bool   `json:"public"`
}

type serverJSON struct {
	serverLite
	UserData            *string      `json:"user_data"`
	CompatibilityMode   bool         `json:"compatibility_mode"`
	DiskEncrypted       bool         `json:"disk_encrypted"`
	ConsoleURL          *string      `json:"console_url"`
	ConsoleToken        *string      `json:"console_token"`
	ConsoleTokenExpires *string      `json:"console_token_expires"`
	SnapshotsSchedule   *string      `json:"snapshots_schedule"`
	SnapshotsRetention  *string      `json:"snapshots_retention"`
	Account             accountLite  `json:"account"`
	Image               imageLite    `json:"image"`
	Zone                zoneJSON     `json:"zone"`
	ServerType          serverType   `json:"server_type"`
	CloudIPs            []cipLite    `json:"cloud_ips"`
	ServerGroups        []groupLite  `json:"server_groups"`
	Interfaces          []ifaceJSON  `json:"interfaces"`
	Snapshots           []struct{}   `json:"snapshots"`
	Volumes             []volumeLite `json:"volumes"`
}

// volumeLite is a volume embedded in a server: its own fields, without
// the objects it refers to.
type volumeLite struct {
	ref
	Name             string     `json:"name"`
	Status           string     `json:"status"`
	Description      string     `json:"description"`
	Size             int        `json:"size"`
	Serial           string     `json:"serial"`
	Boot             bool       `json:"boot"`
	Encrypted        bool       `json:"encrypted"`
	Locked           bool       `json:"locked"`
	DeleteWithServer bool       `json:"delete_with_server"`
	FilesystemType   *string    `json:"filesystem_type"`
	FilesystemLabel  *string    `json:"filesystem_label"`
	Source           *string    `json:"source"`
	SourceType       string     `json:"source_type"`
	StorageType      string     `json:"storage_type"`
	CreatedAt        time.Time  `json:"created_at"`
	UpdatedAt        time.Time  `json:"updated_at"`
	DeletedAt        *time.Time `json:"deleted_at"`
}

type volumeJSON struct {
	volumeLite
	Server  *serverLite `json:"server"`
	Account accountLite `json:"account"`
	Image   imageLite   `json:"image"`
}

type cipLite struct {
	ref
	Status     string  `json:"status"`
	PublicIP   string  `json:"public_ip"`
	PublicIPv4 string  `json:"public_ipv4"`
	PublicIPv6 string  `json:"public_ipv6"`
	FQDN       string  `json:"fqdn"`
	ReverseDNS *string `json:"reverse_dns"`
	Name       *string `json:"name"`
	Mode       string  `json:"mode"`
}

type cipJSON struct {
	cipLite
	PortTranslators []PortTranslator `json:"port_translators"`
	Account         accountLite      `json:"account"`
	Interface       *ifaceJSON       `json:"interface"`
	Server          *serverLite      `json:"server"`
	LoadBalancer    *lbLite          `json:"load_balancer"`
	ServerGroup     *groupLite       `json:"server_group"`
	DatabaseServer  *struct{}        `json:"database_server"`
}

type lbLite struct {
	ref
	Name          string     `json:"name"`
	Status        string     `json:"status"`
	Locked        bool       `json:"locked"`
	BufferSize    int        `json:"buffer_size"`
	HTTPSRedirect bool       `json:"https_redirect"`
	CreatedAt     time.Time  `json:"created_at"`
	DeletedAt     *time.Time `json:"deleted_at"`
}

type listenerJSON struct {
	Protocol      string  `json:"protocol"`
	In            int     `json:"in"`
	Out           int     `json:"out"`
	Timeout       int     `json:"timeout"`
	ProxyProtocol *string `json:"proxy_protocol"`
}

type healthcheckJSON struct {
	Type          string  `json:"type"`
	Request       *string `json:"request"`
	Port          int     `json:"port"`
	Interval      int     `json:"interval"`
	Timeout       int     `json:"timeout"`
	ThresholdUp   int     `json:"threshold_up"`
	ThresholdDown int     `json:"threshold_down"`
}

type acmeJSON struct {
	Certificate *Certificate `json:"certificate"`
	Domains     []ACMEDomain `json:"domains"`
}

type lbJSON struct {
	lbLite
	Policy            string          `json:"policy"`
	Listeners         []listenerJSON  `json:"listeners"`
	Healthcheck       healthcheckJSON `json:"healthcheck"`
	Acme              acmeJSON        `json:"acme"`
	SSLMinimumVersion *string         `json:"ssl_minimum_version"`
	Certificate       *Certificate    `json:"certificate"`
	Account           accountLite     `json:"account"`
	CloudIPs          []cipLite       `json:"cloud_ips"`
	Nodes             []serverLite    `json:"nodes"`
}

type groupLite struct {
	ref
	Name        string    `json:"name"`
	Description *string   `json:"description"`
	CreatedAt   time.Time `json:"created_at"`
	Default     bool      `json:"default"`
	FQDN        string    `json:"fqdn"`
}

type groupJSON struct {
	groupLite
	Account        accountLite  `json:"account"`
	FirewallPolicy *policyLite  `json:"firewall_policy"`
	Servers        []serverLite `json:"servers"`
}

type policyLite struct {
	ref
	Default     bool      `json:"default"`
	Name        *string   `json:"name"`
	CreatedAt   time.Time `json:"created_at"`
	Description *string   `json:"description"`
}

type policyJSON struct {
	policyLite
	ServerGroup *groupLite `json:"server_group"`
	Rules       []ruleLite `json:"rules"`
}

type ruleLite struct {
	ref
	Source          *string   `json:"source"`
	SourcePort      *string   `json:"source_port"`
	Destination     *string   `json:"destination"`
	DestinationPort *string   `json:"destination_port"`
	Protocol        *string   `json:"protocol"`
	IcmpTypeName    *string   `json:"icmp_type_name"`
	Description     *string   `json:"description"`
	CreatedAt       time.Time `json:"created_at"`
}

type ruleJSON struct {
	ruleLite
	FirewallPolicy policyLite `json:"firewall_policy"`
}

// view renders the state as the API's documents, with URLs on base.
type view struct {
	st      *state
	base    string
	account string
}

// view renders for a request: URLs point back where it came.
func (s *Server) view(r *http.Request) view {
	return view{st: s.st, base: simkit.BaseURL(r), account: s.opts.Account}
}

func (v view) ref(kind, collection, id string) ref {
	return ref{ID: id, ResourceType: kind, URL: v.url(collection, id)}
}

func (v view) accountLite() accountLite {
	return accountLite{ref: v.ref("account", "accounts", v.account), Name: "Brightbox", Status: "active"}
}

func (v view) zone(handle string) zoneJSON {
	return zoneJSON{ref: v.ref("zone", "zones", zoneIDs[handle]), Handle: handle}
}

func (v view) serverType(t serverType) serverType {
	t.ref = v.ref("server_type", "server_types", t.ID)
	return t
}

func (v view) iface(srv *CloudServer) ifaceJSON {
	ip := func(a string) *string {
		if a == "none" {
			return nil
		}
		return nullable(a)
	}
	return ifaceJSON{ref: v.ref("interface", "interfaces", srv.Interface), MACAddress: macFor(srv.Interface),
		IPv4Address: ip(srv.IPv4), IPv6Address: ip(srv.IPv6)}
}

// macFor is a MAC address derived from an interface ID.
func macFor(id string) string {
	h := sha256.Sum256([]byte(id))
	return fmt.Sprintf("02:24:19:%02x:%02x:%02x", h[0], h[1], h[2])
}

func (v view) serverLite(srv *CloudServer) serverLite {
	l := serverLite{ref: v.ref("server", "servers", srv.ID), Name: srv.Name, Status: srv.Status, Locked: srv.Locked,
		Hostname: srv.Hostname, FQDN: srv.FQDN, CreatedAt: srv.CreatedAt, DeletedAt: srv.DeletedAt}
	if srv.Status != StatusCreating {
		started := srv.CreatedAt.Add(time.Minute)
		l.StartedAt = &started
	}
	return l
}

func (v view) server(srv *CloudServer) serverJSON {
	t, _ := findServerType(srv.Type)
	out := serverJSON{
		serverLite: v.serverLite(srv), Account: v.accountLite(), Zone: v.zone(srv.Zone), ServerType: v.serverType(t),
		Image:    v.image(UbuntuImage),
		CloudIPs: []cipLite{}, ServerGroups: []groupLite{}, Interfaces: []ifaceJSON{v.iface(srv)},
		Snapshots: []struct{}{}, Volumes: []volumeLite{},
	}
	for _, vol := range v.st.volumes.All() {
		if vol.Server == srv.ID {
			out.Volumes = append(out.Volumes, v.volumeLite(vol))
		}
	}
	for _, c := range v.st.cips.All() {
		if c.Target != "" && c.Target == srv.Interface {
			out.CloudIPs = append(out.CloudIPs, v.cipLite(c))
		}
	}
	for _, g := range v.st.groups.All() {
		if slices.Contains(g.Servers, srv.ID) {
			out.ServerGroups = append(out.ServerGroups, v.groupLite(g))
		}
	}
	return out
}

// image is an image of the cloud (images) in its short form.
func (v view) image(id string) imageLite {
	im, _ := findImage(id)
	return imageLite{ref: v.ref("image", "images", id), Name: im.Name, Username: im.Username, Status: "available",
		Arch: "x86_64", Official: true, Public: true}
}

func (v view) volumeLite(vol *Volume) volumeLite {
	out := volumeLite{ref: v.ref("volume", "volumes", vol.ID), Name: vol.Name, Status: vol.Status,
		Description: vol.Description, Size: vol.Size, Serial: vol.Serial, Boot: vol.Boot, Encrypted: vol.Encrypted,
		Locked: vol.Locked, DeleteWithServer: vol.DeleteWithServer, FilesystemType: nullable(vol.FilesystemType),
		FilesystemLabel: nullable(vol.FilesystemLabel), SourceType: "raw", StorageType: "network",
		CreatedAt: vol.CreatedAt, UpdatedAt: vol.UpdatedAt, DeletedAt: vol.DeletedAt}
	if vol.Image != "" {
		out.Source, out.SourceType = nullable(vol.Image), "image"
	}
	return out
}

func (v view) volume(vol *Volume) volumeJSON {
	out := volumeJSON{volumeLite: v.volumeLite(vol), Account: v.accountLite(), Image: v.image(cmp.Or(vol.Image, BlankImage))}
	if srv, ok := v.st.servers.Get(vol.Server); ok && vol.Server != "" {
		lite := v.serverLite(srv)
		out.Server = &lite
	}
	return out
}

func (v view) cipLite(c *CloudIP) cipLite {
	status := "unmapped"
	if c.Target != "" {
		status = "mapped"
	}
	return cipLite{ref: v.ref("cloud_ip", "cloud_ips", c.ID), Status: status, PublicIP: c.PublicIPv4,
		PublicIPv4: c.PublicIPv4, PublicIPv6: c.PublicIPv6, FQDN: c.FQDN, ReverseDNS: nullable(c.ReverseDNS),
		Name: nullable(c.Name), Mode: c.Mode}
}

func (v view) cip(c *CloudIP) cipJSON {
	out := cipJSON{cipLite: v.cipLite(c), PortTranslators: slices.Clone(c.PortTranslators), Account: v.accountLite()}
	if out.PortTranslators == nil {
		out.PortTranslators = []PortTranslator{}
	}
	switch {
	case strings.HasPrefix(c.Target, "int-"):
		if srv := v.st.serverByInterface(c.Target); srv != nil {
			iface, lite := v.iface(srv), v.serverLite(srv)
			out.Interface, out.Server = &iface, &lite
		}
	case strings.HasPrefix(c.Target, "lba-"):
		if lb, ok := v.st.lbs.Get(c.Target); ok {
			lite := v.lbLite(lb)
			out.LoadBalancer = &lite
		}
	case strings.HasPrefix(c.Target, "grp-"):
		if g, ok := v.st.groups.Get(c.Target); ok {
			lite := v.groupLite(g)
			out.ServerGroup = &lite
		}
	}
	return out
}

func (st *state) serverByInterface(id string) *CloudServer {
	for _, srv := range st.servers.All() {
		if srv.Interface == id {
			return srv
		}
	}
	return nil
}

func (v view) lbLite(lb *LoadBalancer) lbLite {
	return lbLite{ref: v.ref("load_balancer", "load_balancers", lb.ID), Name: lb.Name, Status: lb.Status,
		Locked: lb.Locked, BufferSize: lb.BufferSize, HTTPSRedirect: lb.HTTPSRedirect, CreatedAt: lb.CreatedAt,
		DeletedAt: lb.DeletedAt}
}

func (v view) lb(lb *LoadBalancer) lbJSON {
	hc := lb.Healthcheck
	out := lbJSON{
		lbLite: v.lbLite(lb), Policy: lb.Policy, Listeners: []listenerJSON{},
		Healthcheck: healthcheckJSON{Type: hc.Type, Request: nullable(hc.Request), Port: hc.Port, Interval: hc.Interval,
			Timeout: hc.Timeout, ThresholdUp: hc.ThresholdUp, ThresholdDown: hc.ThresholdDown},
		Acme:              acmeJSON{Domains: slices.Clone(lb.Domains), Certificate: lb.ACMECertificate},
		SSLMinimumVersion: nullable(lb.SSLMinimumVersion), Certificate: lb.Certificate, Account: v.accountLite(),
		CloudIPs: []cipLite{}, Nodes: []serverLite{},
	}
	if out.Acme.Domains == nil {
		out.Acme.Domains = []ACMEDomain{}
	}
	for _, l := range lb.Listeners {
		out.Listeners = append(out.Listeners, listenerJSON{Protocol: l.Protocol, In: l.In, Out: l.Out,
			Timeout: l.Timeout, ProxyProtocol: nullable(l.ProxyProtocol)})
	}
	for _, c := range v.st.cips.All() {
		if c.Target == lb.ID {
			out.CloudIPs = append(out.CloudIPs, v.cipLite(c))
		}
	}
	for _, id := range lb.Nodes {
		if srv, ok := v.st.servers.Get(id); ok {
			out.Nodes = append(out.Nodes, v.serverLite(srv))
		}
	}
	return out
}

func (v view) groupLite(g *ServerGroup) groupLite {
	return groupLite{ref: v.ref("server_group", "server_groups", g.ID), Name: g.Name,
		Description: nullable(g.Description), CreatedAt: g.CreatedAt, Default: g.Default, FQDN: groupFQDN(g)}
}

func (v view) group(g *ServerGroup) groupJSON {
	out := groupJSON{groupLite: v.groupLite(g), Account: v.accountLite(), Servers: []serverLite{}}
	if p := v.st.policyOf(g.ID); p != nil {
		lite := v.policyLite(p)
		out.FirewallPolicy = &lite
	}
	for _, id := range g.Servers {
		if srv, ok := v.st.servers.Get(id); ok {
			out.Servers = append(out.Servers, v.serverLite(srv))
		}
	}
	return out
}

// policyOf is the firewall policy applied to server group id, if any.
func (st *state) policyOf(groupID string) *FirewallPolicy {
	for _, p := range st.policies.All() {
		if p.ServerGroup == groupID {
			return p
		}
	}
	return nil
}

func (v view) policyLite(p *FirewallPolicy) policyLite {
	return policyLite{ref: v.ref("firewall_policy", "firewall_policies", p.ID), Default: p.Default,
		Name: nullable(p.Name), CreatedAt: p.CreatedAt, Description: nullable(p.Description)}
}

func (v view) policy(p *FirewallPolicy) policyJSON {
	out := policyJSON{policyLite: v.policyLite(p), Rules: []ruleLite{}}
	if g, ok := v.st.groups.Get(p.ServerGroup); ok {
		lite := v.groupLite(g)
		out.ServerGroup = &lite
	}
	for _, r := range v.st.rules.All() {
		if r.FirewallPolicy == p.ID {
			out.Rules = append(out.Rules, v.ruleLite(r))
		}
	}
	return out
}

func (v view) ruleLite(r *FirewallRule) ruleLite {
	return ruleLite{ref: v.ref("firewall_rule", "firewall_rules", r.ID), Source: nullable(r.Source),
		SourcePort: nullable(r.SourcePort), Destination: nullable(r.Destination),
		DestinationPort: nullable(r.DestinationPort), Protocol: nullable(r.Protocol),
		IcmpTypeName: nullable(r.IcmpTypeName), Description: nullable(r.Description), CreatedAt: r.CreatedAt}
}

func (v view) rule(r *FirewallRule) ruleJSON {
	out := ruleJSON{ruleLite: v.ruleLite(r)}
	if p, ok := v.st.policies.Get(r.FirewallPolicy); ok {
		out.FirewallPolicy = v.policyLite(p)
	}
	return out
}

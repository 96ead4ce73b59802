package openstacksim

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/netip"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// The other project's credentials: OtherProject serves them.
const (
	// OtherUsername and OtherPassword are the password credentials of the
	// other project's user, in the first user's domain.
	OtherUsername = "ccm-other"
	OtherPassword = "ccm-other-secret"
	// OtherProjectName is the other project, in the first user's project
	// domain.
	OtherProjectName = "other-project"
	// OtherApplicationCredentialID, OtherApplicationCredentialName and
	// OtherApplicationCredentialSecret are an application credential of
	// the other project's user.
	OtherApplicationCredentialID     = "5f0c2a9e7d1b4c63a8e2f49b0d6c3e71" //nolint:gosec // the simulator's test credential
	OtherApplicationCredentialName   = "other-project-ccm"
	OtherApplicationCredentialSecret = "other-project-app-cred-secret"
)

// otherProjectIDs is the sequence number the other project's resource
// IDs start after: OpenStack's IDs are UUIDs, unique across the projects
// of a cloud, so a server, port or network ID of this project names
// nothing in the other. (The port MACs derived from it differ too.)
const otherProjectIDs = 0x90_0000

// OtherProject serves, on this server's URL, another project of the same
// OpenStack cloud: one Keystone for both, as every project of a cloud
// authenticates at one auth URL. The other project's user (OtherUsername,
// OtherPassword, in the first user's domain) and its application
// credential hold a role on OtherProjectName only; the project has one
// ACTIVE server of its own, "other-project-0", on a private network,
// subnet and router of its own, and sees the cloud's shared things as
// every project does: the flavors, the public images and the external
// (floating) network, by the same IDs. A token request naming the other
// user or its application credential, and every request with a token
// Keystone issued to it, go to it; every other request to this project.
// Its credentials are valid, and the cloud answers them as OpenStack
// answers a token of another project: Nova lists only that project's
// servers and a GET of one of this project's is 404 itemNotFound
// ("Instance … could not be found."), and Neutron's and Octavia's lookups
// by ID of this project's resources are 404 too. CloudConfigFor gives its cloud.conf.
// The first call creates the project; later ones return it.
func (s *Server) OtherProject() *Server {
	s.otherOnce.Do(func() {
		first := s.opts.Users[0]
		o := New(Options{
			// It moves on with time as this project does.
			Common: simkit.Common{SettleAfter: s.opts.SettleAfter},
			Region: s.opts.Region,
			Users: []User{{Name: OtherUsername, Password: OtherPassword, Domain: first.Domain,
				Project: OtherProjectName, ProjectDomain: first.ProjectDomain}},
			ApplicationCredentials: []ApplicationCredential{{ID: OtherApplicationCredentialID, Name: OtherApplicationCredentialName,
				Secret: OtherApplicationCredentialSecret, User: OtherUsername}},
			TokenTTL: s.opts.TokenTTL, ProvisioningReads: s.opts.ProvisioningReads, MaxLimit: s.opts.MaxLimit,
			MaxRoutes: s.opts.MaxRoutes, OctaviaMinor: s.opts.OctaviaMinor, DisabledExtensions: s.opts.DisabledExtensions,
			NoDefaults: true,
			// One Cinder and one set of hosts serve both projects.
			Hypervisor: s.opts.Hypervisor, VolumeTypes: s.opts.VolumeTypes, VolumeZones: s.opts.VolumeZones,
			VolumeQuotas: s.opts.VolumeQuotas, MaxDiskDevices: s.opts.MaxDiskDevices,
		})
		o.mu.Lock()
		for k := kNetwork; k <= kLast; k++ {
			o.st.seq[k] = otherProjectIDs
		}
		o.mu.Unlock()
		o.addOtherDefaults(s)
		o.AddServer(NovaServer{Name: "other-project-0"})
		s.AddAccount(o.claims, o.Handler())
		s.other = o
	})
	return s.other
}

// addOtherDefaults gives the other project (o) the defaults of primary
// that make sense in it: a private network and subnet (10.1.0.0/16) and
// a router of its own, and primary's external network and its subnet,
// by the same IDs (an external network is shared by every project). Its
// copy of the external subnet hands out the upper half of the allocation
// pool, so the two projects' floating IPs and router gateways do not
// collide while primary uses the lower half.
func (o *Server) addOtherDefaults(primary *Server) {
	d := primary.Defaults()
	net := o.AddNetwork(Network{Name: "private"})
	sub := o.AddSubnet(Subnet{Name: "private-subnet", NetworkID: net.ID, CIDR: "10.1.0.0/16"})
	od := Defaults{NetworkID: net.ID}
	if d.SubnetID != "" {
		od.SubnetID = sub.ID
	}
	primary.mu.Lock()
	fnet, fnetOK := primary.st.networks.Get(d.FloatingNetworkID)
	fsub, fsubOK := primary.st.subnets.Get(d.FloatingSubnetID)
	var extNet Network
	var extSub Subnet
	if fnetOK && fsubOK {
		extNet, extSub = fnet.clone(), fsub.clone()
	}
	primary.mu.Unlock()
	if fnetOK && fsubOK {
		o.AddNetwork(Network{ID: extNet.ID, Name: extNet.Name, Description: extNet.Description, Shared: extNet.Shared,
			External: true, MTU: extNet.MTU, AvailabilityZones: extNet.AvailabilityZones,
			TaggedAttributes: TaggedAttributes{Tags: extNet.Tags, StandardAttributes: StandardAttributes{ProjectID: extNet.ProjectID}}})
		o.AddSubnet(Subnet{ID: extSub.ID, Name: extSub.Name, NetworkID: extNet.ID, CIDR: extSub.CIDR, GatewayIP: extSub.GatewayIP,
			AllocationPools:  upperHalf(extSub.AllocationPools),
			TaggedAttributes: TaggedAttributes{Tags: extSub.Tags, StandardAttributes: StandardAttributes{ProjectID: extSub.ProjectID}}})
		od.FloatingNetworkID, od.FloatingSubnetID = extNet.ID, extSub.ID
	}
	if d.RouterID != "" {
		od.RouterID = o.AddRouter(Router{Name: "router1"}, od.FloatingNetworkID, sub.ID).ID
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	od.SecurityGroupID = o.st.defaultSecurityGroup(o.st.projectID).ID
	o.st.defaults = od
}

// upperHalf is the upper half of the first IPv4 allocation pool; pools as
// they are when there is none.
func upperHalf(pools []AllocationPool) []AllocationPool {
	if len(pools) == 0 {
		return pools
	}
	start, err1 := netip.ParseAddr(pools[0].Start)
	end, err2 := netip.ParseAddr(pools[0].End)
	if err1 != nil || err2 != nil || !start.Is4() || !end.Is4() || end.Compare(start) <= 0 {
		return pools
	}
	a, b := start.As4(), end.As4()
	lo := uint32(a[0])<<24 | uint32(a[1])<<16 | uint32(a[2])<<8 | uint32(a[3])
	hi := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
	mid := lo + (hi-lo)/2 + 1
	m := netip.AddrFrom4([4]byte{byte(mid >> 24), byte(mid >> 16), byte(mid >> 8), byte(mid)})
	return []AllocationPool{{Start: m.String(), End: pools[0].End}}
}

// claims reports whether r is this project's (the server is the other
// project of another server, which calls it for every request): a
// request whose X-Auth-Token Keystone issued to it (expired ones
// included: it answers them 401), or a token request (POST
// /identity/v3/auth/tokens) whose body names its user (by ID, or name
// and domain), its application credential (by ID, or name and user) or
// a token it issued. The body is read and put back for the handler.
func (s *Server) claims(r *http.Request) bool {
	if tok := r.Header.Get("X-Auth-Token"); tok != "" && s.issued(tok) {
		return true
	}
	if r.Method != http.MethodPost || r.URL.Path != identityPrefix+"/v3/auth/tokens" || r.Body == nil {
		return false
	}
	b, err := io.ReadAll(r.Body)
	_ = r.Body.Close()
	r.Body = io.NopCloser(bytes.NewReader(b))
	if err != nil {
		return false
	}
	var req authRequest
	if json.Unmarshal(b, &req) != nil {
		return false
	}
	return s.names(req)
}

// issued reports whether Keystone issued tok to this server's users.
func (s *Server) issued(tok string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tokens[tok] != nil
}

// names reports whether a token request names one of this server's users
// or application credentials, or a token it issued, whatever the secret
// and scope: Keystone then checks them as it does for any user.
func (s *Server) names(req authRequest) bool {
	id := req.Auth.Identity
	if p := id.Password; p != nil {
		for i := range s.opts.Users {
			u := &s.opts.Users[i]
			if p.User.ID != "" && p.User.ID == u.ID || p.User.ID == "" && p.User.Name == u.Name && p.User.Domain.matchesDomain(u.Domain) {
				return true
			}
		}
	}
	if ac := id.ApplicationCredential; ac != nil {
		for i := range s.opts.ApplicationCredentials {
			a := &s.opts.ApplicationCredentials[i]
			owner := s.appCredUser(a)
			if ac.ID != "" && ac.ID == a.ID || ac.ID == "" && ac.Name != "" && ac.Name == a.Name && ac.User != nil && owner != nil &&
				(ac.User.ID == owner.ID || ac.User.ID == "" && ac.User.Name == owner.Name && ac.User.Domain.matchesDomain(owner.Domain)) {
				return true
			}
		}
	}
	return id.Token != nil && id.Token.ID != "" && s.issued(id.Token.ID)
}

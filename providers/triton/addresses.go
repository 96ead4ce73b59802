package triton

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/joyent/triton-go/compute"
	"github.com/joyent/triton-go/network"
	corev1 "k8s.io/api/core/v1"

	"github.com/ccmkit/ccmkit/framework/cloudapi"
	"github.com/ccmkit/ccmkit/framework/nodeaddr"
)

// addressBook builds the machines' Node addresses: each NIC's IP as
// ExternalIP when its network is public, else InternalIP; the machine's
// CNS names as ExternalDNS in the public CNS zone, InternalDNS otherwise;
// its name as Hostname.
//
// A machine lists its NICs' IPs and networks in two arrays, in NIC order
// (CloudAPI builds both from the NICs), so a listed machine needs no NIC
// read. Only when the arrays do not pair up (a NIC without an IP, an older
// CloudAPI) are its NICs read, at most once per TTL per machine. The
// networks' public flags come from one network list per networkTTL.
type addressBook struct {
	api        *api
	publicZone string
	ttl        time.Duration

	mu   sync.Mutex
	nics map[string]nicRead // by machine ID
}

type nicRead struct {
	at   time.Time
	nics []nicIP
}

// nicIP is an IP of a machine and the network it is on.
type nicIP struct{ ip, network string }

func newAddressBook(a *api, cfg *Config, ttl time.Duration) *addressBook {
	return &addressBook{
		api:        a,
		publicZone: cnsPublicZone(&cfg.LoadBalancer, a.Datacenter),
		ttl:        ttl,
		nics:       map[string]nicRead{},
	}
}

// cnsPublicZone is the CNS zone of names on public networks:
// TRITON_CNS_PUBLIC_ZONE, or Triton's public cloud's <dc>.triton.zone.
func cnsPublicZone(s *LoadBalancerSettings, datacenter string) string {
	if s.CNSPublicZone != "" {
		return s.CNSPublicZone
	}
	return datacenter + ".triton.zone"
}

// of returns m's Node addresses. The error names what could not be known;
// the addresses that could are returned with it.
func (b *addressBook) of(ctx context.Context, m *compute.Instance) ([]corev1.NodeAddress, error) {
	ips, err := b.ips(ctx, m)
	if err != nil {
		return nil, err
	}
	nets, err := b.networksFor(ctx, ips)
	if err != nil {
		return nil, err
	}
	builder := nodeaddr.NewBuilder(nodeaddr.DualStack)
	for _, n := range ips {
		if isPublic(nets[n.network], n.ip) {
			builder.AddExternal(n.ip)
		} else {
			builder.AddInternal(n.ip)
		}
	}
	for _, name := range m.DomainNames {
		if inZone(name, b.publicZone) {
			builder.AddDNS(corev1.NodeExternalDNS, name)
		} else {
			builder.AddDNS(corev1.NodeInternalDNS, name)
		}
	}
	builder.AddHostname(m.Name)
	return builder.Build()
}

// ips returns m's IPs with their networks, the primary IP first: from the
// machine's ips and networks arrays when they pair up, else from its NICs.
func (b *addressBook) ips(ctx context.Context, m *compute.Instance) ([]nicIP, error) {
	var out []nicIP
	if paired(m) {
		for k, ip := range m.IPs {
			out = append(out, nicIP{ip: ip, network: m.Networks[k]})
		}
	} else {
		var err error
		if out, err = b.readNICs(ctx, m.ID); err != nil {
			return nil, err
		}
	}
	for k, n := range out {
		if n.ip == m.PrimaryIP && k > 0 {
			out = append([]nicIP{n}, append(out[:k:k], out[k+1:]...)...)
			break
		}
	}
	return out, nil
}

// paired reports whether m's ips and networks arrays describe its NICs:
// as many of each, every IP an address.
func paired(m *compute.Instance) bool {
	if len(m.IPs) != len(m.Networks) {
		return false
	}
	for _, ip := range m.IPs {
		if _, err := netip.ParseAddr(ip); err != nil {
			return false
		}
	}
	return true
}

// readNICs returns the machine's NICs' IPs, read at most once per TTL.
func (b *addressBook) readNICs(ctx context.Context, id string) ([]nicIP, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if r, ok := b.nics[id]; ok && time.Since(r.at) < b.ttl {
		return r.nics, nil
	}
	nics, err := one(ctx, "machines.nics.list", func(ctx context.Context) ([]*compute.NIC, error) {
		return b.api.Compute().Instances().ListNICs(ctx, &compute.ListNICsInput{InstanceID: id})
	})
	if err != nil {
		return nil, fmt.Errorf("listing the NICs of machine %s: %w", id, err)
	}
	var out []nicIP
	for _, n := range nics {
		if n != nil {
			out = append(out, nicIP{ip: n.IP, network: n.Network})
		}
	}
	b.dropStale()
	b.nics[id] = nicRead{at: time.Now(), nics: out}
	return out, nil
}

// dropStale forgets the NIC reads older than the TTL (deleted machines').
func (b *addressBook) dropStale() {
	for id, r := range b.nics {
		if time.Since(r.at) >= b.ttl {
			delete(b.nics, id)
		}
	}
}

// networksFor returns the account's networks, listed again (at most every
// networkRefresh) when one of ips is on a network the cached list lacks.
func (b *addressBook) networksFor(ctx context.Context, ips []nicIP) (map[string]*network.Network, error) {
	ctx = cloudapi.WithOperation(ctx, "networks.list")
	nets, err := b.api.networks(ctx, false)
	if err != nil {
		return nil, err
	}
	for _, n := range ips {
		if _, ok := nets[n.network]; !ok {
			return b.api.networks(ctx, true)
		}
	}
	return nets, nil
}

// isPublic reports whether ip, on network n, is a public address: n's
// public flag, or, for a network the account cannot see, whether the
// address is outside the private and link-local ranges.
func isPublic(n *network.Network, ip string) bool {
	if n != nil {
		return n.Public
	}
	a, err := netip.ParseAddr(ip)
	return err == nil && !a.IsPrivate() && !a.IsLoopback() && !a.IsLinkLocalUnicast()
}

// inZone reports whether the DNS name is in zone.
func inZone(name, zone string) bool {
	name = strings.TrimSuffix(strings.ToLower(name), ".")
	zone = strings.TrimSuffix(strings.ToLower(zone), ".")
	return zone != "" && strings.HasSuffix(name, "."+zone)
}

package digitalocean

import (
	"slices"

	"github.com/digitalocean/godo"
)

// specChanges names the settings in which the load balancer lb differs from
// the desired spec want; none means no write is needed. The API fills
// defaults and returns lists in its own order, so both sides are compared
// normalized: forwarding rules by protocol family and port, droplets and
// tags as sets, an absent firewall as an empty one. "droplet tag" is the
// tag the load balancer targets (its tag field); "tags" are its own
// labels (tags).
func specChanges(lb *godo.LoadBalancer, want *godo.LoadBalancerRequest) []string {
	have := requestOf(lb)
	checks := []struct {
		name string
		same bool
	}{
		{"name", have.Name == want.Name},
		{"forwarding rules", sameRules(have.ForwardingRules, want.ForwardingRules)},
		// A load balancer that targets a tag answers the droplets carrying
		// it in droplet_ids: they are the tag's business, not the spec's.
		{"droplet tag", have.Tag == want.Tag},
		{"droplets", want.Tag != "" || sameSet(have.DropletIDs, want.DropletIDs)},
		{"health check", sameHealthCheck(have.HealthCheck, want.HealthCheck)},
		{"sticky sessions", sameSticky(have.StickySessions, want.StickySessions)},
		{"algorithm", have.Algorithm == want.Algorithm},
		{"size", have.SizeSlug == want.SizeSlug && have.SizeUnit == want.SizeUnit},
		{"type", have.Type == want.Type},
		{"redirect http to https", have.RedirectHttpToHttps == want.RedirectHttpToHttps},
		{"proxy protocol", have.EnableProxyProtocol == want.EnableProxyProtocol},
		{"backend keepalive", have.EnableBackendKeepalive == want.EnableBackendKeepalive},
		{"http idle timeout", derefOr(have.HTTPIdleTimeoutSeconds, 60) == derefOr(want.HTTPIdleTimeoutSeconds, 60)},
		{"disable lets encrypt dns records", derefOr(have.DisableLetsEncryptDNSRecords, false) == derefOr(want.DisableLetsEncryptDNSRecords, false)},
		{"firewall", sameFirewall(have.Firewall, want.Firewall)},
		{"network", have.Network == want.Network},
		{"network stack", have.NetworkStack == want.NetworkStack},
		{"tags", sameSet(have.Tags, want.Tags)},
	}
	var changes []string
	for _, c := range checks {
		if !c.same {
			changes = append(changes, c.name)
		}
	}
	return changes
}

// requestOf is the request that would recreate lb as it is.
func requestOf(lb *godo.LoadBalancer) *godo.LoadBalancerRequest {
	r := &godo.LoadBalancerRequest{
		Name: lb.Name, Algorithm: lb.Algorithm, SizeSlug: lb.SizeSlug, SizeUnit: lb.SizeUnit, Type: lb.Type,
		ForwardingRules: lb.ForwardingRules, HealthCheck: lb.HealthCheck, StickySessions: lb.StickySessions,
		DropletIDs: lb.DropletIDs, Tag: lb.Tag, Tags: lb.Tags, RedirectHttpToHttps: lb.RedirectHttpToHttps,
		EnableProxyProtocol: lb.EnableProxyProtocol, EnableBackendKeepalive: lb.EnableBackendKeepalive,
		VPCUUID: lb.VPCUUID, VPCSubnetUUID: lb.VPCSubnetUUID, DisableLetsEncryptDNSRecords: lb.DisableLetsEncryptDNSRecords,
		HTTPIdleTimeoutSeconds: lb.HTTPIdleTimeoutSeconds, Firewall: lb.Firewall, Network: lb.Network,
		NetworkStack: lb.NetworkStack, TLSCipherPolicy: lb.TLSCipherPolicy,
	}
	if lb.Region != nil {
		r.Region = lb.Region.Slug
	}
	return r
}

func sameRules(have, want []godo.ForwardingRule) bool {
	have, want = slices.Clone(have), slices.Clone(want)
	sortRules(have)
	sortRules(want)
	return slices.Equal(have, want)
}

func sameSet[T ~int | ~string](a, b []T) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(slices.Compact(a), slices.Compact(b))
}

// sameHealthCheck compares what the CCM sets; proxy_protocol is the API's.
func sameHealthCheck(a, b *godo.HealthCheck) bool {
	if a == nil || b == nil {
		return a == b
	}
	x, y := *a, *b
	x.ProxyProtocol, y.ProxyProtocol = nil, nil
	return x == y
}

func sameSticky(a, b *godo.StickySessions) bool {
	none := godo.StickySessions{Type: "none"}
	x, y := none, none
	if a != nil && a.Type != "" {
		x = *a
	}
	if b != nil && b.Type != "" {
		y = *b
	}
	return x == y
}

func sameFirewall(a, b *godo.LBFirewall) bool {
	var x, y godo.LBFirewall
	if a != nil {
		x = *a
	}
	if b != nil {
		y = *b
	}
	return sameSet(x.Allow, y.Allow) && sameSet(x.Deny, y.Deny)
}

func derefOr[T any](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}

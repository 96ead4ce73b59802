package skeleton

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/cloud-provider/service/helpers"
	"k8s.io/klog/v2"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/framework/providerid"
	"github.com/ccmkit/ccmkit/framework/reconcile"
)

// This file computes the load balancer a Service asks for and compares it
// with the one the cloud has. It makes no API calls, so the tests cover it
// with plain tables.

type lbRequest = framework.LoadBalancerRequest[LoadBalancerConfig]

// ownerTag marks a load balancer as this Service's, in this cluster. It is
// how Find recovers a load balancer whose ID never reached the Service (a
// crash between create and annotate), so it MUST NOT change.
func ownerTag(clusterName string, svc *corev1.Service) string {
	return "ccmkit:" + clusterName + ":" + string(svc.UID)
}

// desiredSpec is the full load-balancer spec for req. currentTags are the
// tags the load balancer has now: tags someone else added are kept.
func desiredSpec(ctx context.Context, req *lbRequest, codec providerid.Codec, currentTags []string) (*lbSpec, error) {
	svc := req.Service
	listeners, err := desiredListeners(svc)
	if err != nil {
		return nil, err
	}
	return &lbSpec{
		Name:          req.Name,
		Algorithm:     req.Config.Algorithm,
		Listeners:     listeners,
		HealthCheck:   desiredHealthCheck(svc, req.Config),
		ProxyProtocol: req.Config.ProxyProtocol,
		Members:       desiredMembers(ctx, req.Nodes, codec),
		Tags:          withTag(currentTags, ownerTag(req.ClusterName, svc)),
	}, nil
}

// validateService rejects what the Skeleton API cannot do, before any call.
func validateService(svc *corev1.Service) error {
	if ranges, err := helpers.GetLoadBalancerSourceRanges(svc); err != nil || !helpers.IsAllowAll(ranges) {
		// Better to refuse than to expose what the user meant to restrict.
		return errors.New("skeleton load balancers cannot restrict source ranges (spec.loadBalancerSourceRanges)")
	}
	_, err := desiredListeners(svc)
	return err
}

// desiredListeners forwards each Service port to its NodePort, sorted by
// protocol and port.
func desiredListeners(svc *corev1.Service) ([]listener, error) {
	var out []listener
	for _, p := range svc.Spec.Ports {
		proto := cmp.Or(p.Protocol, corev1.ProtocolTCP)
		if proto != corev1.ProtocolTCP && proto != corev1.ProtocolUDP {
			return nil, fmt.Errorf("port %d: protocol %s is not supported (want TCP or UDP)", p.Port, proto)
		}
		if p.NodePort == 0 {
			return nil, fmt.Errorf("port %d has no node port: set spec.allocateLoadBalancerNodePorts to true", p.Port)
		}
		out = append(out, listener{Protocol: string(proto), Port: int(p.Port), TargetPort: int(p.NodePort)})
	}
	if len(out) == 0 {
		return nil, errors.New("the Service has no ports")
	}
	slices.SortFunc(out, func(a, b listener) int { return strings.Compare(listenerKey(a), listenerKey(b)) })
	return out, nil
}

// desiredHealthCheck probes kube-proxy's health check node port when the
// Service keeps traffic on local endpoints (externalTrafficPolicy: Local),
// so that only nodes with a ready endpoint get traffic. Otherwise it probes
// the first port's NodePort, as the annotations say.
func desiredHealthCheck(svc *corev1.Service, cfg *LoadBalancerConfig) healthCheck {
	hc := healthCheck{IntervalSeconds: int(cfg.HealthCheckInterval / time.Second)}
	if path, port := helpers.GetServiceHealthCheckPathPort(svc); path != "" {
		hc.Protocol, hc.Port, hc.Path = healthCheckHTTP, int(port), path
		return hc
	}
	hc.Protocol = cmp.Or(cfg.HealthCheckProtocol, healthCheckTCP)
	if len(svc.Spec.Ports) > 0 {
		hc.Port = int(svc.Spec.Ports[0].NodePort)
	}
	if hc.Protocol == healthCheckHTTP {
		hc.Path = cmp.Or(cfg.HealthCheckPath, "/")
	}
	return hc
}

// desiredMembers returns the sorted instance IDs of nodes. A Node without a
// providerID has not been initialized by the node controller yet; it joins
// on a later sync.
func desiredMembers(ctx context.Context, nodes []*corev1.Node, codec providerid.Codec) []string {
	logger := klog.FromContext(ctx)
	members := []string{}
	for _, n := range nodes {
		if n.Spec.ProviderID == "" {
			continue
		}
		id, err := codec.Parse(n.Spec.ProviderID)
		if err != nil {
			logger.V(2).Info("Leaving node out of the load balancer", "node", klog.KObj(n), "err", err)
			continue
		}
		members = append(members, id.Value)
	}
	slices.Sort(members)
	return slices.Compact(members)
}

// withTag returns tags with tag added if it is missing.
func withTag(tags []string, tag string) []string {
	if slices.Contains(tags, tag) {
		return slices.Clone(tags)
	}
	return append(slices.Clone(tags), tag)
}

func listenerKey(l listener) string { return fmt.Sprintf("%s:%05d", l.Protocol, l.Port) }

// specChanges names what differs between the load balancer's spec and the
// desired one; none means no write is needed. Listeners are keyed by
// protocol and port and members by instance ID, so order never counts as a
// change.
func specChanges(have, want *lbSpec) []string {
	var changes []string
	if !sameItems(want.Listeners, have.Listeners, listenerKey) {
		changes = append(changes, "listeners")
	}
	if !sameItems(want.Members, have.Members, func(id string) string { return id }) {
		changes = append(changes, "members")
	}
	scalars := []struct {
		name string
		same bool
	}{
		{"name", have.Name == want.Name},
		{"algorithm", have.Algorithm == want.Algorithm},
		{"health check", have.HealthCheck == want.HealthCheck},
		{"proxy protocol", have.ProxyProtocol == want.ProxyProtocol},
		{"tags", slices.Equal(have.Tags, want.Tags)},
	}
	for _, s := range scalars {
		if !s.same {
			changes = append(changes, s.name)
		}
	}
	return changes
}

// sameItems reports whether want and have hold equal items under the same
// keys. Duplicate keys (a cloud that stored a member twice) count as a
// difference, which the next full PUT repairs.
func sameItems[T any](want, have []T, key func(T) string) bool {
	plan, err := reconcile.Diff(want, have, key, nil)
	return err == nil && plan.Empty()
}

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
)

// This file computes the load balancer a Service asks for; lb_diff.go
// compares it with the one the cloud has. Neither makes an API call, so
// plain tables test them.

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

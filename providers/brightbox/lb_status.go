package brightbox

import (
	"context"
	"sync"

	corev1 "k8s.io/api/core/v1"
	cloudprovider "k8s.io/cloud-provider"
)

// The Service's status lists each address of the load balancer's cloud IP
// (IPv4 and IPv6) with the cloud IP's fqdn as its hostname: the existing
// CCM published the hostname only, and tools that read it (external-dns,
// users' scripts) keep working, while kube-proxy and clients get the
// addresses. The framework publishes either addresses or a hostname, so
// the hostnames are added to its status here.

// fqdnIndex maps the cloud IPs' addresses to their fqdn, as the driver
// last saw them.
type fqdnIndex struct{ m sync.Map }

func (x *fqdnIndex) record(ip, fqdn string) {
	if fqdn == "" {
		x.m.Delete(ip)
		return
	}
	x.m.Store(ip, fqdn)
}

func (x *fqdnIndex) lookup(ip string) string {
	v, _ := x.m.Load(ip)
	s, _ := v.(string)
	return s
}

// hostnames is the pipeline with the cloud IP's fqdn on each address of
// the status it returns.
type hostnames struct {
	cloudprovider.LoadBalancer
	d *lbDriver
}

func withHostnames(lb cloudprovider.LoadBalancer, d *lbDriver) cloudprovider.LoadBalancer {
	return &hostnames{LoadBalancer: lb, d: d}
}

// GetLoadBalancer reports the Service's load balancer, as the pipeline
// does, with hostnames.
func (h *hostnames) GetLoadBalancer(ctx context.Context, clusterName string, svc *corev1.Service) (*corev1.LoadBalancerStatus, bool, error) {
	status, exists, err := h.LoadBalancer.GetLoadBalancer(ctx, clusterName, svc)
	return h.add(status), exists, err
}

// EnsureLoadBalancer creates or updates the Service's load balancer, as
// the pipeline does, and returns its status with hostnames.
func (h *hostnames) EnsureLoadBalancer(ctx context.Context, clusterName string, svc *corev1.Service, nodes []*corev1.Node) (*corev1.LoadBalancerStatus, error) {
	status, err := h.LoadBalancer.EnsureLoadBalancer(ctx, clusterName, svc, nodes)
	return h.add(status), err
}

func (h *hostnames) add(status *corev1.LoadBalancerStatus) *corev1.LoadBalancerStatus {
	if status == nil {
		return nil
	}
	for i := range status.Ingress {
		in := &status.Ingress[i]
		if in.IP != "" && in.Hostname == "" {
			in.Hostname = h.d.fqdns.lookup(in.IP)
		}
	}
	return status
}

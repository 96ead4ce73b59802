package rancher

// LoadBalancerSettings are the cluster-wide load-balancer settings, part of
// Config. (Stub: the load-balancer helper writes it.)
type LoadBalancerSettings struct{}

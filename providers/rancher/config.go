package rancher

// Config is the provider's configuration. (Stub: the provider helper
// writes it.)
type Config struct {
	// LoadBalancer holds the cluster-wide load-balancer settings
	// (lb_config.go).
	LoadBalancer LoadBalancerSettings `json:"loadBalancer"`
}

package rancher

// SetBeforeSharedLock makes every sync of p's load balancers call fn as
// it is about to take the shared external service's lock. Set it before
// the provider is initialized.
func SetBeforeSharedLock(p *Provider, fn func()) { p.beforeSharedLock = fn }

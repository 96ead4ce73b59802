package rancher

import (
	"context"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/providers/rancher/internal/cloud"
)

// The Cattle client itself (go-rancher's types, requests made through
// env.HTTPClient, paging, the not-found rule) is in internal/cloud, which
// the CSI driver shares; this is the CCM's side of it.

// connect connects to the Cattle API with the CCM's settings, on the
// framework's HTTP client; a resource the API says is gone wraps
// framework.ErrNotFound, so that the framework's "gone" decisions see it.
func connect(ctx context.Context, cfg *Config, env *framework.Env) (*cloud.API, error) {
	return cloud.Connect(ctx, cfg.credentials(), env.HTTPClient, framework.ErrNotFound)
}

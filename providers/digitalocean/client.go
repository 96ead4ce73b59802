package digitalocean

import (
	"net/http"

	"github.com/digitalocean/godo"

	"github.com/ccmkit/ccmkit/providers/digitalocean/internal/cloud"
)

// The godo client and the rules every call follows (the framework's
// *http.Client, the token per request, "not found" only on the API's own
// 404, lists that fail whole) are package internal/cloud's, shared with
// the CSI driver; this file is what only the CCM adds: its settings'
// names.

// newGodoClient returns a godo client for cfg over hc: the token is added
// per request, so a rotated DO_ACCESS_TOKEN_FILE applies at once.
func newGodoClient(cfg *Config, hc *http.Client) (*godo.Client, error) {
	base := cfg.OverrideURL
	if base == "" {
		base = cloud.DefaultAPIURL
	}
	return cloud.NewClient(hc, base, "DO_OVERRIDE_URL", cfg.Token.Reveal)
}

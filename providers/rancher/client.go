package rancher

import (
	rancher "github.com/rancher/go-rancher/v2"
)

// api is the Cattle client and what Init learned about the environment.
// (Stub: the provider helper writes it.)
type api struct {
	client *rancher.RancherClient
}

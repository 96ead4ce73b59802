package brightbox

import (
	"context"
	"net/http"
	"slices"
	"sync"

	brightbox "github.com/brightbox/gobrightbox/v2"
	"k8s.io/klog/v2"

	"github.com/ccmkit/ccmkit/framework/cloudapi"
)

// A deleted server leaves its server groups and load balancers at once,
// but its Node stays until the node lifecycle controller deletes it (about
// one --node-monitor-period later). A sync in between would add the
// server back, and the API refuses a write that names a server that is no
// more (422 invalid_arguments, "no server srv-…"): every load balancer's
// sync would fail with a Warning Event. So, on that refusal only, the
// servers the write was adding are looked up; those the API says are gone
// are remembered and left out of every later write, and the write is made
// once more. A healthy sync pays nothing for this.

// maxGoneServers bounds the memory of gone servers: forgetting one costs
// one more refusal and lookup if its Node is still listed.
const maxGoneServers = 1024

// lookUpOneByOne is the most servers a refused write's lookup reads with
// one GET each; more are checked against one list of the servers.
const lookUpOneByOne = 8

// goneServers is the set of server IDs the API said are gone. Server IDs
// are never reused, so a remembered one is never wrong; its zero value
// is ready.
type goneServers struct {
	mu  sync.Mutex
	ids map[string]struct{}
}

// without returns ids less the servers known to be gone.
func (g *goneServers) without(ids []string) []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.ids) == 0 {
		return ids
	}
	return slices.DeleteFunc(slices.Clone(ids), func(id string) bool {
		_, gone := g.ids[id]
		return gone
	})
}

func (g *goneServers) add(id string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.ids == nil {
		g.ids = map[string]struct{}{}
	}
	if len(g.ids) >= maxGoneServers {
		for old := range g.ids {
			delete(g.ids, old)
			break
		}
	}
	g.ids[id] = struct{}{}
}

// refusedAsInvalid reports whether err is the API's 422 refusal of a
// write's arguments (a server it names among them).
func refusedAsInvalid(err error) bool {
	return apiStatus(err) == http.StatusUnprocessableEntity
}

// leaveOutGone looks up the servers a refused write was adding and
// remembers those the API says are gone: a server's own 404, a deleted or
// failed status, or a complete list without it. It reports whether any of
// adding is gone, found so now or by another sync since this one computed
// its write; a failed lookup remembers nothing.
func (d *lbDriver) leaveOutGone(ctx context.Context, adding []string) bool {
	unknown := d.gone.without(adding)
	if len(unknown) < len(adding) {
		return true // another sync's lookup found some: write without them
	}
	adding = unknown
	logger := klog.FromContext(ctx)
	var found []string
	if len(adding) <= lookUpOneByOne {
		for _, id := range adding {
			s, err := one(ctx, "servers.get", func(ctx context.Context) (*brightbox.Server, error) {
				return d.client.Server(ctx, id)
			})
			switch {
			case isNotFound(err):
				found = append(found, id)
			case err != nil || s == nil:
				logger.V(2).Info("Could not look up a server a write was adding", "server", id, "err", err)
			case gone(s):
				found = append(found, id)
			}
		}
	} else {
		all, err := d.client.Servers(cloudapi.WithOperation(ctx, "servers.list"))
		if err != nil {
			logger.V(2).Info("Could not list the servers a write was adding", "err", err)
			return false
		}
		live := map[string]bool{}
		for i := range all {
			live[all[i].ID] = !gone(&all[i])
		}
		for _, id := range adding {
			if !live[id] {
				found = append(found, id)
			}
		}
	}
	for _, id := range found {
		d.gone.add(id)
	}
	if len(found) > 0 {
		logger.V(2).Info("Leaving out of load balancers servers that are gone; their Nodes go soon", "servers", found)
	}
	return len(found) > 0
}

package rancher

import (
	"context"
	"fmt"

	rancher "github.com/rancher/go-rancher/v2"

	"github.com/ccmkit/ccmkit/providers/rancher/internal/cloud"
)

// The load balancers' writes, made as the provider's reads are
// (internal/cloud): through API.Do, so each carries the sync's context and
// is named in metrics and logs. Every answer is checked to be the resource
// written. (Creating one is cloud.CreateResource, which the CSI driver
// shares.)

// updateResource PUTs updates to the resource res and returns Cattle's
// answer.
func updateResource[T any](ctx context.Context, a *cloud.API, op, schemaType string, res *rancher.Resource, updates any) (*T, error) {
	out := new(T)
	if err := a.Do(ctx, op, func(c *cloud.Call) error { return c.Update(schemaType, res, updates, out) }); err != nil {
		return nil, err
	}
	if got := cloud.ResourceID(out); got != res.Id {
		return nil, fmt.Errorf("updating %s %s: malformed response: the API answered with %q", schemaType, res.Id, got)
	}
	return out, nil
}

// deleteResource DELETEs res; Cattle's own 404 is an error a.NotFound
// reports.
func deleteResource(ctx context.Context, a *cloud.API, op string, res *rancher.Resource) error {
	return a.Do(ctx, op, func(c *cloud.Call) error { return c.Delete(res) })
}

// runAction runs the action name on res (which must offer it now: Cattle's
// actions depend on the state).
func runAction(ctx context.Context, a *cloud.API, op, schemaType, name string, res *rancher.Resource, input any) error {
	var out rancher.Service
	return a.Do(ctx, op, func(c *cloud.Call) error { return c.Action(schemaType, name, res, input, &out) })
}

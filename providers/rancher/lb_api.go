package rancher

import (
	"context"
	"fmt"

	rancher "github.com/rancher/go-rancher/v2"
)

// The load balancers' writes, made as the provider's reads are (client.go):
// through api.do, so each carries the sync's context and is named in
// metrics and logs. Every answer is checked to be the resource written.

// createResource POSTs obj as a new resource of schemaType and returns
// Cattle's answer.
func createResource[T any](ctx context.Context, a *api, op, schemaType string, obj any) (*T, error) {
	out := new(T)
	if err := a.do(ctx, op, func(c *cattleCall) error { return c.Create(schemaType, obj, out) }); err != nil {
		return nil, err
	}
	if resourceID(out) == "" {
		return nil, fmt.Errorf("creating a %s: malformed response: no id", schemaType)
	}
	return out, nil
}

// updateResource PUTs updates to the resource res and returns Cattle's
// answer.
func updateResource[T any](ctx context.Context, a *api, op, schemaType string, res *rancher.Resource, updates any) (*T, error) {
	out := new(T)
	if err := a.do(ctx, op, func(c *cattleCall) error { return c.Update(schemaType, res, updates, out) }); err != nil {
		return nil, err
	}
	if got := resourceID(out); got != res.Id {
		return nil, fmt.Errorf("updating %s %s: malformed response: the API answered with %q", schemaType, res.Id, got)
	}
	return out, nil
}

// deleteResource DELETEs res; Cattle's own 404 is an error a.notFound
// reports.
func deleteResource(ctx context.Context, a *api, op string, res *rancher.Resource) error {
	return a.do(ctx, op, func(c *cattleCall) error { return c.Delete(res) })
}

// runAction runs the action name on res (which must offer it now: Cattle's
// actions depend on the state).
func runAction(ctx context.Context, a *api, op, schemaType, name string, res *rancher.Resource, input any) error {
	var out rancher.Service
	return a.do(ctx, op, func(c *cattleCall) error { return c.Action(schemaType, name, res, input, &out) })
}

package triton

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/joyent/triton-go/network"

	"github.com/ccmkit/ccmkit/framework/cloudapi"
	"github.com/ccmkit/ccmkit/framework/intern"
	"github.com/ccmkit/ccmkit/providers/triton/internal/cloud"
)

// This file adapts the shared CloudAPI client (internal/cloud: the
// clients, the signer, Connect) to the CCM and holds the rule its lookups
// follow: only CloudAPI's own answer about the one resource a request
// named is an authoritative not-found (see one and notFound): a 404 with
// {"code":"ResourceNotFound"}, or a 410 Gone with the machine, state
// "deleted". A 401, a 5xx, a timeout or a proxy's HTML 404 is an error,
// so no Node is deleted on it.

// api is the CloudAPI clients, what Connect learned about the account and
// datacenter, and the CCM's cache of the account's networks.
type api struct {
	*cloud.Client

	nets networkCache
	// services holds each distinct triton.cns.services list of the
	// machines once: every node carries every Service's entries (5,000
	// nodes of 1,000 Services: 5,000 tags of 40 kB, all alike), and the
	// shared list of the cluster's machines holds them all
	// (framework/intern).
	services intern.Slices[string]
}

// connect builds the clients for cfg over hc (cloud.Connect) and learns
// the account (its UUID, login and triton_cns_enabled) and the
// datacenter's name. Wrong credentials, a wrong URL or an unreachable
// CloudAPI fail here, named by their variable.
func connect(ctx context.Context, cfg *Config, hc *http.Client) (*api, error) {
	cr := cfg.credentials()
	c, err := cloud.Connect(ctx, &cr, hc)
	if err != nil {
		return nil, err
	}
	a := &api{Client: c}
	a.nets.api = a
	return a, nil
}

// notFoundRule is how CloudAPI says the resource a request named does not
// exist: 404 {"code":"ResourceNotFound"}, or, for a machine, 410 Gone with
// the machine, state "deleted", until its history is purged.
var notFoundRule = cloudapi.NotFoundRule{Statuses: []int{http.StatusNotFound, http.StatusGone},
	Condition: func(status int, body []byte) bool {
		if status == http.StatusGone {
			return cloudapi.FieldEquals("deleted", "state")(status, body)
		}
		return cloudapi.FieldEquals("ResourceNotFound", "code")(status, body)
	}}

// notFoundError marks CloudAPI's authoritative answer that the one
// resource a call named does not exist (any more).
type notFoundError struct{ err error }

func (e *notFoundError) Error() string { return e.err.Error() }
func (e *notFoundError) Unwrap() error { return e.err }

// one makes call, a request that named one resource (a machine, its tags,
// a network by ID), under the operation name op. triton-go's errors keep
// neither headers nor body, so the answer is recorded on the way: when it
// is CloudAPI's own not-found, the error is marked so notFound reports it.
func one[T any](ctx context.Context, op string, call func(context.Context) (T, error)) (T, error) {
	ctx, rec := cloudapi.RecordAnswers(cloudapi.WithOperation(ctx, op))
	v, err := cloud.Guarded(op, func() (T, error) { return call(ctx) })
	if err != nil && cloud.StatusOf(err) != 0 {
		if ans, ok := rec.Last(); ok && notFoundRule.IsNotFound(cloudapi.OneResource, ans) {
			return v, &notFoundError{err: err}
		}
	}
	return v, err
}

// notFound reports whether err, from a call made with one, is CloudAPI's
// authoritative "does not exist" (404 ResourceNotFound or 410 Gone) for
// the resource it named. Any other error, a 404 from a proxy or to a list
// included, is not.
func notFound(err error) bool {
	var nf *notFoundError
	return errors.As(err, &nf)
}

// networkCache holds the account's networks, read at most once per TTL
// (they change rarely; a NIC on an unknown network reads them again).
type networkCache struct {
	api *api

	mu   sync.Mutex
	at   time.Time
	nets map[string]*network.Network
}

// networkTTL is how long one network list serves; networkRefresh is how
// old it must be for a NIC on a network it lacks to read it again.
const (
	networkTTL     = 5 * time.Minute
	networkRefresh = 30 * time.Second
)

// networks returns the account's networks by ID, listed at most once per
// networkTTL, or networkRefresh when fresh is set (a NIC on a network the
// cached list lacks). An empty list is not kept: an account whose machines
// run sees their networks, so the next lookup asks again rather than find
// none for a TTL. Callers must not modify the result.
func (a *api) networks(ctx context.Context, fresh bool) (map[string]*network.Network, error) {
	c := &a.nets
	c.mu.Lock()
	defer c.mu.Unlock()
	ttl := networkTTL
	if fresh {
		ttl = networkRefresh
	}
	if c.nets != nil && time.Since(c.at) < ttl {
		return c.nets, nil
	}
	list, err := a.Network().List(cloudapi.WithOperation(ctx, "networks.list"), &network.ListInput{})
	if err != nil {
		return nil, fmt.Errorf("listing networks: %w", err)
	}
	nets, err := networksByID(list)
	if err != nil {
		return nil, fmt.Errorf("listing networks: %w", err)
	}
	if len(nets) > 0 {
		c.nets, c.at = nets, time.Now()
	}
	return nets, nil
}

// forgetNetworks drops the cached network list: the next lookup lists
// them again.
func (a *api) forgetNetworks() {
	a.nets.mu.Lock()
	defer a.nets.mu.Unlock()
	a.nets.nets = nil
}

// networksByID indexes a network list by ID. A network whose ID is no UUID
// (CloudAPI's network UUID, which an appliance's create names) is a
// malformed response.
func networksByID(list []*network.Network) (map[string]*network.Network, error) {
	nets := make(map[string]*network.Network, len(list))
	for _, n := range list {
		switch {
		case n == nil:
			return nil, errors.New("malformed response: no network")
		case !cloud.IsUUID(n.Id):
			return nil, fmt.Errorf("malformed response: network ID %q", n.Id)
		}
		nets[n.Id] = n
	}
	return nets, nil
}

package brightbox

import (
	"context"

	brightbox "github.com/brightbox/gobrightbox/v2"

	"github.com/ccmkit/ccmkit/providers/brightbox/internal/cloud"
)

// The rules every API call follows (the framework's HTTP client, the
// OAuth2 token, what an authoritative not-found is) are internal/cloud's,
// shared with the CSI driver (package csidriver), which must not link
// this package. These are its helpers under the names this package's
// files call them by.

// one makes call, a request that named one resource, under the operation
// name op (cloud.One): isNotFound reports the API's own 404 to it.
func one[T any](ctx context.Context, op string, call func(context.Context) (T, error)) (T, error) {
	return cloud.One(ctx, op, call)
}

// isNotFound reports whether err, from a call made with one, is the API's
// authoritative "does not exist" for the resource it named (cloud.IsNotFound).
func isNotFound(err error) bool { return cloud.IsNotFound(err) }

// gone reports whether the API reports s as no longer existing, as the
// existing CCM decides: deleted or failed (cloud.ServerGone).
func gone(s *brightbox.Server) bool { return cloud.ServerGone(s) }

// apiStatus is the HTTP status of an API error answer, 0 for other errors
// (cloud.APIStatus).
func apiStatus(err error) int { return cloud.APIStatus(err) }

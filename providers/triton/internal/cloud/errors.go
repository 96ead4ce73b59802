package cloud

import (
	"errors"
	"fmt"
	"regexp"

	tritonerrors "github.com/joyent/triton-go/errors"
)

// StatusOf is the HTTP status of a CloudAPI error answer, 0 for an error
// without one (a connection refused, a timeout).
func StatusOf(err error) int {
	if e := APIError(err); e != nil {
		return e.StatusCode
	}
	return 0
}

// APIError is the CloudAPI error answer in err's chain, or nil.
func APIError(err error) *tritonerrors.APIError {
	var e *tritonerrors.APIError
	if causeAs(err, &e) {
		return e
	}
	return nil
}

// causeAs is errors.As that also follows Cause: triton-go wraps its errors
// with github.com/pkg/errors v0.8, whose wrappers have Cause but not
// Unwrap.
func causeAs[T any](err error, target *T) bool {
	for range 16 { // a bound, in case a Cause returns its own error
		if errors.As(err, target) {
			return true
		}
		var c interface{ Cause() error }
		if !errors.As(err, &c) {
			return false
		}
		if err = c.Cause(); err == nil {
			return false
		}
	}
	return false
}

// Guarded makes call, a triton-go request, and turns a panic in it into
// an error. triton-go decodes the triton.cns.* tags of every machine it
// reads with unchecked type assertions (compute.TagsExtractMeta): a
// machine whose triton.cns.disable is not a boolean would otherwise crash
// the CCM or the CSI driver instead of failing one request.
func Guarded[T any](op string, call func() (T, error)) (v T, err error) {
	defer func() {
		if r := recover(); r != nil {
			var zero T
			v, err = zero, fmt.Errorf("%s: malformed CloudAPI response (triton-go: %v)", op, r)
		}
	}()
	return call()
}

// uuidPattern is a Triton UUID.
var uuidPattern = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// IsUUID reports whether s is a Triton UUID (lower-case hex): the form of
// every ID CloudAPI gives (machines, networks, volumes, firewall rules).
func IsUUID(s string) bool { return uuidPattern.MatchString(s) }

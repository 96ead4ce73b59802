package cloudapi

import (
	"context"
	"net/http"
	"strings"
)

type operationKey struct{}

// WithOperation overrides the operation name for requests made with ctx,
// e.g. WithOperation(ctx, "droplets.list").
func WithOperation(ctx context.Context, op string) context.Context {
	return context.WithValue(ctx, operationKey{}, op)
}

func operationFrom(ctx context.Context) (string, bool) {
	op, ok := ctx.Value(operationKey{}).(string)
	return op, ok && op != ""
}

// idPlaceholder replaces path segments that look like resource IDs.
const idPlaceholder = "{id}"

// DefaultOperation names a request "<METHOD> <path template>", e.g.
// "GET /v2/droplets/{id}": the query string is dropped and every path
// segment that looks like a resource ID becomes "{id}", so the name has
// bounded cardinality and is the same for every resource.
func DefaultOperation(r *http.Request) string {
	if r == nil {
		return "GET /"
	}
	method := r.Method
	if method == "" {
		method = http.MethodGet
	}
	path := "/"
	if r.URL != nil && r.URL.Path != "" {
		path = r.URL.Path
	}
	segments := strings.Split(path, "/")
	for i, s := range segments {
		if looksLikeID(s) {
			segments[i] = idPlaceholder
		}
	}
	path = strings.Join(segments, "/")
	if !strings.HasPrefix(path, "/") {
		path = "/" + path
	}
	return method + " " + path
}

// looksLikeID reports whether a path segment is an identifier rather than a
// fixed part of the API: all digits, a UUID, 8 or more hex digits, longer
// than 12 characters with a digit, starting with a digit and containing a
// letter (Rancher's "1h42"), or a short-prefixed random ID such as
// Brightbox's "srv-lv426" or Rancher's "c-x7k2p".
func looksLikeID(s string) bool {
	if s == "" {
		return false
	}
	var digits, letters, hex int
	for _, c := range s {
		switch {
		case '0' <= c && c <= '9':
			digits++
			hex++
		case 'a' <= c && c <= 'f', 'A' <= c && c <= 'F':
			letters++
			hex++
		case 'g' <= c && c <= 'z', 'G' <= c && c <= 'Z':
			letters++
		}
	}
	n := len(s)
	switch {
	case digits == n:
		return true
	case isUUID(s):
		return true
	case hex == n && n >= 8:
		return true
	case digits > 0 && n > 12:
		return true
	case isDigit(s[0]) && letters > 0:
		return true
	default:
		return isPrefixedID(s)
	}
}

// isUUID reports whether s has the 8-4-4-4-12 hex digit form.
func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch i {
		case 8, 13, 18, 23:
			if s[i] != '-' {
				return false
			}
		default:
			if !isHex(s[i]) {
				return false
			}
		}
	}
	return true
}

// isPrefixedID reports whether s is a short type prefix (one to four
// lowercase letters), a dash, and lowercase alphanumerics: either exactly
// five of them, as in Brightbox's "srv-lv426" and "lba-abcde" or Rancher's
// "c-x7k2p", or three or more with a digit among them, as in "i-000123" or
// "lb-0042". A word such as "load-balancers" is neither.
func isPrefixedID(s string) bool {
	prefix, id, ok := strings.Cut(s, "-")
	if !ok || len(prefix) < 1 || len(prefix) > 4 || len(id) < 3 {
		return false
	}
	for i := 0; i < len(prefix); i++ {
		if prefix[i] < 'a' || prefix[i] > 'z' {
			return false
		}
	}
	digit := false
	for i := 0; i < len(id); i++ {
		switch c := id[i]; {
		case isDigit(c):
			digit = true
		case c < 'a' || c > 'z':
			return false
		}
	}
	return digit || len(id) == 5
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func isHex(c byte) bool {
	return isDigit(c) || ('a' <= c && c <= 'f') || ('A' <= c && c <= 'F')
}

package cloudapi

import (
	"net/url"
	"slices"
	"strings"
)

// redactedError is an error whose message had credentials removed. Unwrap
// still returns the original so errors.Is and errors.As keep working.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// error removes from err's message every credential that u carries: its
// user information and the values of sensitive query parameters. A
// *url.Error gets its URL redacted too. err is returned as is when it
// contains none of them.
func (r *redactor) error(u *url.URL, err error) error {
	if err == nil || u == nil {
		return err
	}
	// Only an outermost *url.Error is rebuilt; one wrapped deeper is
	// still covered by the message redaction below.
	if ue, ok := err.(*url.Error); ok { //nolint:errorlint // deliberately not errors.As, see above

		return &url.Error{Op: ue.Op, URL: r.rawURL(ue.URL), Err: r.error(u, ue.Err)}
	}
	msg := err.Error()
	redacted := msg
	for _, secret := range r.secrets(u) {
		redacted = strings.ReplaceAll(redacted, secret, Redacted)
	}
	if redacted == msg {
		return err
	}
	return &redactedError{msg: redacted, err: err}
}

// secrets lists the credentials in u, raw and unescaped, longest first so
// that no secret is only partly replaced.
func (r *redactor) secrets(u *url.URL) []string {
	var out []string
	if u.User != nil {
		out = append(out, u.User.Username())
		if p, ok := u.User.Password(); ok {
			out = append(out, p)
		}
	}
	for _, raw := range []string{u.RawQuery, u.Fragment} {
		for _, pair := range strings.FieldsFunc(raw, func(c rune) bool { return c == '&' || c == ';' }) {
			name, value, ok := strings.Cut(pair, "=")
			if decoded, err := url.QueryUnescape(name); err == nil {
				name = decoded
			}
			if !ok || value == "" || !r.sensitive(name) {
				continue
			}
			out = append(out, value)
			if decoded, err := url.QueryUnescape(value); err == nil {
				out = append(out, decoded)
			}
		}
	}
	out = slices.DeleteFunc(out, func(s string) bool { return s == "" })
	slices.SortFunc(out, func(a, b string) int {
		if len(a) != len(b) {
			return len(b) - len(a)
		}
		return strings.Compare(a, b)
	})
	return slices.Compact(out)
}

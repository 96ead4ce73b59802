package cloudapi

import (
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
)

// Redacted replaces every secret removed from URLs, headers, bodies and
// errors.
const Redacted = "REDACTED"

// sensitiveNames are header names that always carry credentials.
var sensitiveNames = []string{
	"authorization", "proxy-authorization", "x-auth-token", "x-subject-token",
	"x-api-key", "cookie", "set-cookie",
}

// sensitiveWords mark any header, query parameter or JSON/form field whose
// name contains one of them (case-insensitively) as sensitive.
var sensitiveWords = []string{
	"token", "secret", "password", "passwd", "key", "auth", "signature", "credential",
}

var defaultRedactor = newRedactor(nil)

// RedactURL returns u as a string with its user information and the values
// of sensitive query parameters replaced by Redacted.
func RedactURL(u *url.URL) string { return defaultRedactor.url(u) }

// RedactHeader returns a copy of h with the values of sensitive headers
// replaced by Redacted. An Authorization-style value keeps its scheme
// ("Bearer REDACTED"); Location headers have their URL redacted.
func RedactHeader(h http.Header) http.Header { return defaultRedactor.header(h) }

// RedactBody returns a copy of a request or response body with secrets
// replaced by Redacted. In JSON every string under a sensitive key (at any
// depth, so {"token": {"id": "..."}} is covered) is redacted; in form-encoded
// bodies the values of sensitive fields are; other text gets a best-effort
// "name=value" / "Bearer value" scrub. Truncated JSON is handled.
func RedactBody(body []byte) []byte { return defaultRedactor.body(body) }

// redactor holds the sensitive-name rules, plus Options.Sensitive.
type redactor struct {
	names    map[string]bool // lowercased exact names
	freeText *regexp.Regexp  // name=value pairs in free text
}

var bearerPattern = regexp.MustCompile(`(?i)\b(bearer|basic|token)\s+[A-Za-z0-9._~+/=-]+`)

func newRedactor(extra []string) *redactor {
	r := &redactor{names: make(map[string]bool)}
	words := slices.Clone(sensitiveWords)
	for _, n := range append(slices.Clone(sensitiveNames), extra...) {
		n = strings.ToLower(strings.TrimSpace(n))
		if n != "" {
			r.names[n] = true
			words = append(words, regexp.QuoteMeta(n))
		}
	}
	// name, separator, an optional auth scheme, then the value.
	r.freeText = regexp.MustCompile(`(?i)([\w.-]*(?:` + strings.Join(words, "|") + `)[\w.-]*["']?\s*[:=]\s*` +
		`(?:(?:bearer|basic|digest|token|signature)\s+)?)("[^"]*"?|'[^']*'?|[^\s&,;"']+)`)
	return r
}

// sensitive reports whether a header, parameter or field name marks a secret.
func (r *redactor) sensitive(name string) bool {
	n := strings.ToLower(strings.TrimSpace(name))
	if n == "" {
		return false
	}
	if r.names[n] {
		return true
	}
	for _, w := range sensitiveWords {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

func (r *redactor) url(u *url.URL) string {
	if u == nil {
		return ""
	}
	c := *u
	if c.Host == "" && strings.Contains(c.String(), "@") {
		// Userinfo url.Parse did not take as such: "user:pass@host" (no
		// "//") parses as scheme "user", "x//u:p@h" as a path, "#//u:p@h"
		// as a fragment.
		return Redacted
	}
	if c.User != nil {
		c.User = url.User(Redacted)
	}
	// A '?' or '#' in a password ends the authority: "http://u#:pw@h"
	// parses as host "u" with the password in the fragment.
	c.RawQuery = r.form(c.RawQuery)
	if strings.Contains(c.RawQuery, "@") {
		c.RawQuery = Redacted
	}
	if c.Fragment != "" {
		c.Fragment, c.RawFragment = r.form(c.Fragment), ""
	}
	if strings.Contains(c.Fragment, "@") {
		c.Fragment = Redacted
	}
	return c.String()
}

// form redacts the values of sensitive fields in a query string or
// form-encoded body, keeping the order and encoding of everything else.
func (r *redactor) form(s string) string {
	if s == "" {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for len(s) > 0 {
		pair, sep := s, ""
		if i := strings.IndexAny(s, "&;"); i >= 0 {
			pair, sep, s = s[:i], s[i:i+1], s[i+1:]
		} else {
			s = ""
		}
		name, _, hasValue := strings.Cut(pair, "=")
		if decoded, err := url.QueryUnescape(name); err == nil {
			name = decoded
		}
		if hasValue && r.sensitive(name) {
			pair = pair[:strings.IndexByte(pair, '=')+1] + Redacted
		}
		b.WriteString(pair)
		b.WriteString(sep)
	}
	return b.String()
}

func (r *redactor) header(h http.Header) http.Header {
	if h == nil {
		return nil
	}
	out := make(http.Header, len(h))
	for name, values := range h {
		values = slices.Clone(values)
		switch {
		case r.sensitive(name):
			for i, v := range values {
				values[i] = redactCredential(name, v)
			}
		case strings.EqualFold(name, "Location"), strings.EqualFold(name, "Content-Location"):
			for i, v := range values {
				values[i] = r.rawURL(v)
			}
		}
		out[name] = values
	}
	return out
}

// redactCredential redacts a sensitive header value. Authorization-style
// headers keep their scheme so logs still show how a request authenticated.
func redactCredential(name, value string) string {
	n := strings.ToLower(name)
	if !strings.Contains(n, "authorization") && !strings.Contains(n, "authenticate") {
		return Redacted
	}
	scheme, rest, ok := strings.Cut(strings.TrimSpace(value), " ")
	if !ok || strings.TrimSpace(rest) == "" || len(scheme) > 32 || !isSchemeName(scheme) {
		return Redacted
	}
	return scheme + " " + Redacted
}

func isSchemeName(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !isDigit(c) && c != '-' && (c|0x20 < 'a' || c|0x20 > 'z') {
			return false
		}
	}
	return s != ""
}

// rawURL redacts a URL given as a string; one that does not parse is
// redacted entirely.
func (r *redactor) rawURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return Redacted
	}
	return r.url(u)
}

func (r *redactor) body(body []byte) []byte {
	if body == nil {
		return nil
	}
	trimmed := strings.TrimSpace(string(body))
	switch {
	case trimmed == "":
		return slices.Clone(body)
	case trimmed[0] == '{' || trimmed[0] == '[':
		return r.json(body)
	case isFormEncoded(trimmed):
		return []byte(r.form(trimmed))
	default:
		text := r.freeText.ReplaceAllString(string(body), "${1}"+Redacted)
		return []byte(bearerPattern.ReplaceAllString(text, "${1} "+Redacted))
	}
}

// isFormEncoded reports whether s looks like "a=b&c=d": no whitespace or
// JSON/XML punctuation, and at least one '='.
func isFormEncoded(s string) bool {
	return strings.Contains(s, "=") && !strings.ContainsAny(s, " \t\r\n{}<>\"")
}

package framework

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/go-logr/logr"
	"github.com/go-logr/zapr"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/textlogger"
)

// client-go logs the bodies of Kubernetes API requests and responses at
// -v=8 and above, in full at -v=10 (k8s.io/client-go/rest: "Request Body",
// "Response Body"). Some of them are credentials: the TokenReview that the
// delegated authentication of /metrics and /healthz sends holds the
// caller's bearer token (and the answer echoes it), a TokenRequest's answer
// holds a new token, a Secret holds whatever a provider keeps in it.
// redactLogs makes the process's logger replace those values, and nothing
// else: every other body, the CCM's own calls included, is still logged as
// -v asks.

// redactedValue replaces a credential in a logged body.
const redactedValue = "[redacted]"

// redactLogs wraps the logger the logging flags configured. It runs once,
// right after logsapi applied them and before anything else logs.
func redactLogs(contextual bool) {
	klog.SetLogFilter(bodyFilter{})
	if !contextual {
		// klog.FromContext falls back to klog's own logger, which applies
		// the filter.
		return
	}
	sink := klog.Background().GetSink()
	if sink == nil {
		return
	}
	opts := []klog.LoggerOption{klog.ContextualLogger(true)}
	if w, ok := sink.(textlogger.KlogBufferWriter); ok {
		opts = append(opts, klog.WriteKlogBuffer(w.WriteKlogBuffer))
	}
	if u, ok := sink.(zapr.Underlier); ok { // JSON: keep its flush
		opts = append(opts, klog.FlushLogger(func() { _ = u.GetUnderlying().Sync() }))
	}
	klog.SetLoggerWithOptions(logr.New(newRedactingSink(sink)), opts...)
}

// redactingSink passes every entry to the sink it wraps, with credentials
// removed from logged bodies.
type redactingSink struct {
	sink logr.LogSink
}

var (
	_ logr.LogSink          = redactingSink{}
	_ logr.CallDepthLogSink = redactingSink{}
)

// newRedactingSink wraps sink, which was already initialized, one call
// frame deeper (this wrapper's).
func newRedactingSink(sink logr.LogSink) redactingSink {
	if cd, ok := sink.(logr.CallDepthLogSink); ok {
		sink = cd.WithCallDepth(1)
	}
	return redactingSink{sink: sink}
}

func (redactingSink) Init(logr.RuntimeInfo) {}

func (s redactingSink) Enabled(level int) bool { return s.sink.Enabled(level) }

func (s redactingSink) Info(level int, msg string, kvs ...any) {
	s.sink.Info(level, msg, redactBodies(msg, kvs)...)
}

func (s redactingSink) Error(err error, msg string, kvs ...any) {
	s.sink.Error(err, msg, redactBodies(msg, kvs)...)
}

func (s redactingSink) WithValues(kvs ...any) logr.LogSink {
	return redactingSink{sink: s.sink.WithValues(kvs...)}
}

func (s redactingSink) WithName(name string) logr.LogSink {
	return redactingSink{sink: s.sink.WithName(name)}
}

func (s redactingSink) WithCallDepth(depth int) logr.LogSink {
	if cd, ok := s.sink.(logr.CallDepthLogSink); ok {
		return redactingSink{sink: cd.WithCallDepth(depth)}
	}
	return s
}

// bodyFilter is the same redaction for klog's own logger.
type bodyFilter struct{}

func (bodyFilter) Filter(args []any) []any { return args }

func (bodyFilter) FilterF(format string, args []any) (string, []any) { return format, args }

func (bodyFilter) FilterS(msg string, kvs []any) (string, []any) { return msg, redactBodies(msg, kvs) }

// redactBodies returns kvs with the "body" of a client-go body entry
// redacted; kvs itself is never modified.
func redactBodies(msg string, kvs []any) []any {
	if msg != "Request Body" && msg != "Response Body" {
		return kvs
	}
	for i := 0; i+1 < len(kvs); i += 2 {
		if k, _ := kvs[i].(string); k != "body" {
			continue
		}
		body, ok := kvs[i+1].(string)
		if !ok {
			continue
		}
		if r, changed := redactBody(body); changed {
			kvs = append([]any(nil), kvs...)
			kvs[i+1] = r
		}
	}
	return kvs
}

// Kinds whose bodies hold credentials, as they appear in any encoding
// (JSON, protobuf).
var credentialKinds = [][]byte{[]byte("TokenReview"), []byte("TokenRequest"), []byte("Secret")}

// redactBody removes the credentials from a body client-go logged: JSON
// text, possibly truncated, or the hex dump of a binary (protobuf) one.
// A JSON object of a credential kind keeps everything but the credential;
// anything else that mentions such a kind and cannot be parsed is
// replaced whole.
func redactBody(body string) (string, bool) {
	raw := []byte(body)
	if strings.HasPrefix(body, "00000000  ") {
		raw = unhexDump(body)
	}
	if !mentionsCredentialKind(raw) {
		return body, false
	}
	var obj map[string]any
	if err := json.Unmarshal(raw, &obj); err == nil {
		if !redactObject(obj) {
			return body, false
		}
		out, err := json.Marshal(obj)
		if err == nil {
			return string(out), true
		}
	}
	return fmt.Sprintf("%s (%d bytes that may hold a credential)", redactedValue, len(raw)), true
}

func mentionsCredentialKind(raw []byte) bool {
	for _, k := range credentialKinds {
		if bytes.Contains(raw, k) {
			return true
		}
	}
	return false
}

// redactObject replaces the credentials of a decoded Kubernetes object (or
// list of them) and reports whether it is of a kind that holds any.
func redactObject(obj map[string]any) bool {
	redactField := func(parent, field string) {
		if m, ok := obj[parent].(map[string]any); ok {
			if _, ok := m[field]; ok {
				m[field] = redactedValue
			}
		}
	}
	switch obj["kind"] {
	case "TokenReview":
		redactField("spec", "token")
		return true
	case "TokenRequest":
		redactField("status", "token")
		return true
	case "Secret":
		redactSecret(obj)
		return true
	}
	items, _ := obj["items"].([]any)
	found := false
	for _, it := range items {
		m, ok := it.(map[string]any)
		switch {
		case !ok:
		case obj["kind"] == "SecretList": // items carry no kind
			redactSecret(m)
			found = true
		default: // a List holds kinds of any sort
			found = redactObject(m) || found
		}
	}
	return found
}

func redactSecret(obj map[string]any) {
	for _, field := range []string{"data", "stringData"} {
		if m, ok := obj[field].(map[string]any); ok {
			for k := range m {
				m[k] = redactedValue
			}
		}
	}
}

// unhexDump returns the bytes of an encoding/hex Dump (as client-go logs
// a binary body), as far as it can be read: a truncated dump gives the
// bytes before the cut.
func unhexDump(dump string) []byte {
	var out []byte
	for line := range strings.Lines(dump) {
		if len(line) < 10 {
			break
		}
		cols := line[10:]
		if i := strings.Index(cols, "  |"); i >= 0 {
			cols = cols[:i]
		}
		for _, f := range strings.Fields(cols) {
			b, err := hex.DecodeString(f)
			if err != nil || len(b) != 1 {
				return out
			}
			out = append(out, b[0])
		}
	}
	return out
}

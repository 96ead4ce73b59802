package cloudapi

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"k8s.io/klog/v2"
)

// Verbosity levels of the request log.
const (
	logLevelRequest = 4 // one line per attempt
	logLevelHeaders = 6 // plus redacted request and response headers
	logLevelBodies  = 8 // plus redacted bodies truncated to maxLoggedBody
)

// maxLoggedBody is how much of a body is logged.
const maxLoggedBody = 4 << 10

// logAttempt logs one attempt with everything redacted. At logLevelBodies
// it reads the start of the response body and puts it back in front of the
// rest, so the caller still reads the whole body.
func (t *transport) logAttempt(ctx context.Context, r *http.Request, body *requestBody, resp *http.Response, err error, op string, attempt int, duration time.Duration) {
	logger := klog.FromContext(ctx)
	v := logger.V(logLevelRequest)
	if !v.Enabled() {
		return
	}
	kv := []any{
		"provider", t.opts.Provider,
		"operation", op,
		"method", r.Method,
		"url", t.redactor.url(r.URL),
		"attempt", attempt + 1,
		"duration", duration,
	}
	if resp != nil {
		kv = append(kv, "status", resp.StatusCode)
	} else {
		kv = append(kv, "err", err)
	}
	if logger.V(logLevelHeaders).Enabled() {
		kv = append(kv, "requestHeaders", t.redactor.header(r.Header))
		if resp != nil {
			kv = append(kv, "responseHeaders", t.redactor.header(resp.Header))
		}
	}
	if logger.V(logLevelBodies).Enabled() {
		if data := body.bytes(); data != nil {
			kv = append(kv, "requestBody", t.loggableBody(data, len(data)))
		}
		if resp != nil {
			head, total := peekBody(resp, maxLoggedBody)
			kv = append(kv, "responseBody", t.loggableBody(head, total))
		}
	}
	v.Info("Cloud API request", kv...)
}

// loggableBody redacts data and truncates it to maxLoggedBody. total is
// the body length, or -1 if unknown beyond data.
func (t *transport) loggableBody(data []byte, total int) string {
	truncated := len(data) > maxLoggedBody || total < 0 || total > len(data)
	data = t.redactor.body(data[:min(len(data), maxLoggedBody)])
	if !truncated {
		return string(data)
	}
	if total > 0 {
		return fmt.Sprintf("%s... (truncated from %d bytes)", data, total)
	}
	return string(data) + "... (truncated)"
}

// peekBody reads up to n bytes of resp.Body and replaces the body with one
// that yields them again followed by the rest. It returns the bytes read
// and the body length if it is known to be that short, else -1.
func peekBody(resp *http.Response, n int) ([]byte, int) {
	head := make([]byte, n+1)
	read, err := io.ReadFull(resp.Body, head)
	head = head[:read]
	var rest io.Reader = resp.Body
	switch {
	case err == nil:
		// More to come.
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		rest = eofReader{}
	default:
		rest = errReader{err}
	}
	resp.Body = &readerCloser{Reader: io.MultiReader(bytes.NewReader(head), rest), Closer: resp.Body}
	if err == nil {
		return head[:n], -1
	}
	return head, read
}

type readerCloser struct {
	io.Reader
	io.Closer
}

type eofReader struct{}

func (eofReader) Read([]byte) (int, error) { return 0, io.EOF }

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

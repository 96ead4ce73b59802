package cloudapi

import (
	"context"
	"io"
	"net/http"
	"sync"
)

// MaxAnswerBody is how much of an error answer's body the transport keeps
// for AnswerOf and AnswerRecorder. Cloud APIs' error bodies are a few
// hundred bytes; a longer one is cut, so it no longer parses as JSON and
// is never taken for a not-found.
const MaxAnswerBody = 64 << 10

// Answer is what a cloud API answered to one request: the parts of the
// HTTP response that decide what an error means. SDKs keep different
// parts of it (gophercloud keeps all three, godo the response without its
// body, gobrightbox the body without the headers, triton-go neither), so
// the transport keeps them for every answer it hands back: read them with
// AnswerOf when the SDK's error holds the *http.Response, or with
// RecordAnswers when it does not.
type Answer struct {
	Status int
	Header http.Header
	// Body is the error body (status >= 400), or its first MaxAnswerBody
	// bytes, as far as the SDK has read it: SDKs read an error body whole
	// before they return the error. It is nil for a success.
	Body []byte
}

// AnswerOf returns the answer resp carries. Its Body is what the SDK read
// of an error body that came through this package's transport; for any
// other response (one the transport did not build, or a success) Body is
// nil. A nil resp is the zero Answer.
func AnswerOf(resp *http.Response) Answer {
	if resp == nil {
		return Answer{}
	}
	a := Answer{Status: resp.StatusCode, Header: resp.Header}
	if kb, ok := resp.Body.(*keptBody); ok {
		a.Body = kb.bytes()
	}
	return a
}

// AnswerRecorder holds the last answer the transport handed back for a
// request made with the context RecordAnswers returned. It is for SDKs
// whose errors keep neither the *http.Response nor its headers and body
// (triton-go's APIError holds a status and a code; gobrightbox's APIError
// has no headers):
//
//	ctx, rec := cloudapi.RecordAnswers(ctx)
//	m, err := c.Instances().Get(ctx, &compute.GetInstanceInput{ID: id})
//	if a, ok := rec.Last(); err != nil && ok && notFound.IsNotFound(cloudapi.OneResource, a) { ... }
//
// It is safe for concurrent use; with concurrent requests on one context
// "last" is whichever answered last, so use one recorder per call.
type AnswerRecorder struct {
	mu   sync.Mutex
	resp *http.Response
}

type answerRecorderKey struct{}

// RecordAnswers returns a context whose requests, sent through this
// package's transport, leave their answer in the returned recorder.
func RecordAnswers(ctx context.Context) (context.Context, *AnswerRecorder) {
	rec := &AnswerRecorder{}
	return context.WithValue(ctx, answerRecorderKey{}, rec), rec
}

// Last returns the last answer recorded, and false when no request made
// with the recorder's context got one (it failed before any answer, or
// went through another transport).
func (r *AnswerRecorder) Last() (Answer, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.resp == nil {
		return Answer{}, false
	}
	return AnswerOf(r.resp), true
}

func (r *AnswerRecorder) set(resp *http.Response) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.resp = resp
}

// keepAnswer is the transport's last step: an error answer's body keeps
// what the SDK reads of it, and a recorder in ctx learns the answer.
func keepAnswer(ctx context.Context, resp *http.Response) *http.Response {
	if resp == nil {
		return nil
	}
	if resp.StatusCode >= http.StatusBadRequest && resp.Body != nil {
		resp.Body = &keptBody{ReadCloser: resp.Body}
	}
	if rec, ok := ctx.Value(answerRecorderKey{}).(*AnswerRecorder); ok {
		rec.set(resp)
	}
	return resp
}

// keptBody is a response body that keeps the first MaxAnswerBody bytes
// read from it.
type keptBody struct {
	io.ReadCloser
	mu   sync.Mutex
	kept []byte
}

func (b *keptBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		b.mu.Lock()
		if room := MaxAnswerBody - len(b.kept); room > 0 {
			b.kept = append(b.kept, p[:min(n, room)]...)
		}
		b.mu.Unlock()
	}
	return n, err
}

// bytes returns a copy of what was kept.
func (b *keptBody) bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.kept == nil {
		return nil
	}
	return append([]byte(nil), b.kept...)
}

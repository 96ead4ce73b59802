package cloudapi

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"golang.org/x/time/rate"
	"k8s.io/klog/v2"
)

// NewClient returns an *http.Client whose Transport is NewTransport(o). The
// client has no overall Timeout: each attempt is bounded by o.Timeout.
func NewClient(o Options) *http.Client {
	return &http.Client{Transport: NewTransport(o)}
}

// NewTransport returns the RoundTripper that sets the User-Agent, rate-limits,
// retries, times out, measures, counts and logs every request. It registers
// the package's metrics on first use.
func NewTransport(o Options) http.RoundTripper {
	return newTransport(o)
}

// UserAgent returns "ccmkit/<version> (<provider>)"; an empty version is
// "dev" and an empty provider is left out.
func UserAgent(version, provider string) string {
	if version == "" {
		version = "dev"
	}
	if provider == "" {
		return "ccmkit/" + version
	}
	return "ccmkit/" + version + " (" + provider + ")"
}

// transport implements the request chain described in the package comment.
type transport struct {
	invalid   error   // Options.Validate's: every request fails with it
	opts      Options // with defaults applied
	userAgent string
	limiter   *rate.Limiter // nil when not rate limited
	redactor  *redactor

	// Hooks replaced by tests.
	now    func() time.Time
	sleep  func(ctx context.Context, d time.Duration) error
	jitter func(d time.Duration) time.Duration // uniform in [0, d]
}

func newTransport(o Options) *transport {
	Register()
	invalid := o.Validate()
	o = o.withDefaults()
	t := &transport{
		invalid:   invalid,
		opts:      o,
		userAgent: UserAgent(o.Version, o.Provider),
		redactor:  newRedactor(o.Sensitive),
		now:       time.Now,
		sleep:     sleepContext,
		jitter:    fullJitter,
	}
	if o.QPS > 0 {
		t.limiter = rate.NewLimiter(rate.Limit(o.QPS), o.Burst)
	}
	return t
}

// RoundTrip implements http.RoundTripper. It never modifies req and always
// closes its body.
func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req == nil || req.URL == nil {
		if req != nil && req.Body != nil {
			req.Body.Close()
		}
		return nil, errors.New("cloudapi: nil request or request URL")
	}
	if t.invalid != nil {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, t.invalid
	}
	ctx := req.Context()
	op := t.operation(req)
	body, err := bufferBody(req)
	if err != nil {
		return nil, t.redactor.error(req.URL, fmt.Errorf("cloudapi: %s: reading request body: %w", op, err))
	}
	idempotent := IsIdempotent(req)
	budget := t.startBudget()
	for attempt := 0; ; attempt++ {
		if err := t.waitForToken(ctx); err != nil {
			return nil, fmt.Errorf("cloudapi: %s: waiting for rate limiter: %w", op, err)
		}
		timeout, ok := budget.attemptTimeout()
		if !ok {
			return nil, fmt.Errorf("cloudapi: %s: %w after waiting for the rate limiter", op, budget.spent())
		}
		resp, err := t.attempt(ctx, req, body, op, attempt, timeout)
		reason, retryable := retryReason(ctx, idempotent, resp, err)
		if !retryable {
			return keepAnswer(ctx, resp), err
		}
		logger := klog.FromContext(ctx)
		wait := t.backoff(attempt, resp)
		if attempt >= t.opts.MaxRetries || !budget.allows(wait) {
			logger.V(2).Info("Giving up on cloud API request", "provider", t.opts.Provider,
				"operation", op, "reason", reason, "attempts", attempt+1, "budget", t.opts.Budget)
			if err != nil && attempt >= t.opts.MaxRetries {
				err = fmt.Errorf("cloudapi: %s: giving up after %d attempts: %w", op, attempt+1, err)
			} else if err != nil {
				err = fmt.Errorf("cloudapi: %s: giving up after %d attempts: %w: %w", op, attempt+1, budget.spent(), err)
			}
			return keepAnswer(ctx, resp), err
		}
		retriesTotal.WithLabelValues(t.opts.Provider, op, reason).Inc()
		logger.V(3).Info("Retrying cloud API request", "provider", t.opts.Provider,
			"operation", op, "reason", reason, "attempt", attempt+1, "wait", wait)
		drainAndClose(resp)
		if err := t.sleep(ctx, wait); err != nil {
			return nil, fmt.Errorf("cloudapi: %s: waiting to retry after %s: %w", op, reason, err)
		}
	}
}

// attempt sends one copy of req bounded by timeout, and
// records it in metrics, the Counter and the log.
func (t *transport) attempt(ctx context.Context, req *http.Request, body *requestBody, op string, n int, timeout time.Duration) (*http.Response, error) {
	attemptCtx, cancel := context.WithTimeout(ctx, timeout)
	r := req.Clone(attemptCtx)
	if r.Header == nil {
		r.Header = make(http.Header)
	}
	r.Header.Set("User-Agent", t.userAgentFor(req.Header.Get("User-Agent")))
	body.attach(r)

	start := time.Now()
	resp, err := t.opts.Base.RoundTrip(r)
	duration := time.Since(start)
	if err == nil && resp == nil {
		err = errors.New("cloudapi: base transport returned neither response nor error")
	}
	if err != nil {
		cancel()
		if resp != nil && resp.Body != nil {
			resp.Body.Close()
		}
		resp = nil
		if ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
			err = &attemptTimeoutError{timeout: timeout, err: err}
		}
		err = t.redactor.error(req.URL, err)
	} else {
		if resp.Body == nil {
			resp.Body = http.NoBody
		}
		resp.Body = &cancelOnClose{ReadCloser: resp.Body, cancel: cancel}
	}

	code := "error"
	if resp != nil {
		code = strconv.Itoa(resp.StatusCode)
		t.opts.Counter.add(r.Method, op)
	}
	requestsTotal.WithLabelValues(t.opts.Provider, op, code).Inc()
	requestDuration.WithLabelValues(t.opts.Provider, op).Observe(duration.Seconds())
	t.logAttempt(ctx, r, body, resp, err, op, n, duration)
	return resp, err
}

// operation names the request: WithOperation wins over Options.Operation.
func (t *transport) operation(req *http.Request) string {
	if op, ok := operationFrom(req.Context()); ok {
		return op
	}
	return t.opts.Operation(req)
}

// userAgentFor prefixes the SDK's User-Agent with ours.
func (t *transport) userAgentFor(sdk string) string {
	sdk = strings.TrimSpace(sdk)
	switch {
	case sdk == "", sdk == t.userAgent:
		return t.userAgent
	case strings.HasPrefix(sdk, t.userAgent+" "):
		return sdk
	default:
		return t.userAgent + " " + sdk
	}
}

// requestBody holds a request body read once so that every attempt sends
// the same bytes. A nil *requestBody means the request has no body.
type requestBody struct {
	data []byte
}

// bufferBody reads and closes req.Body. It returns nil when there is none.
func bufferBody(req *http.Request) (*requestBody, error) {
	if req.Body == nil || req.Body == http.NoBody {
		return nil, nil
	}
	defer req.Body.Close()
	data, err := io.ReadAll(req.Body)
	if err != nil {
		return nil, err
	}
	return &requestBody{data: data}, nil
}

// attach gives r a fresh reader over the buffered body.
func (b *requestBody) attach(r *http.Request) {
	if b == nil {
		return
	}
	if len(b.data) == 0 {
		r.Body, r.GetBody, r.ContentLength = http.NoBody, nil, 0
		return
	}
	r.GetBody = func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(b.data)), nil
	}
	r.Body, _ = r.GetBody()
	r.ContentLength = int64(len(b.data))
}

// bytes returns the buffered body, or nil.
func (b *requestBody) bytes() []byte {
	if b == nil {
		return nil
	}
	return b.data
}

// cancelOnClose releases the attempt's context once the caller is done with
// the response body, so the body stays readable after RoundTrip returns.
type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (b *cancelOnClose) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}

// attemptTimeoutError reports that one attempt exceeded its timeout
// (Options.Timeout, or what was left of Options.Budget) while the caller's
// context was still live.
type attemptTimeoutError struct {
	timeout time.Duration
	err     error
}

func (e *attemptTimeoutError) Error() string {
	return fmt.Sprintf("cloudapi: attempt timed out after %s: %v", e.timeout, e.err)
}

func (e *attemptTimeoutError) Unwrap() error { return e.err }

// Timeout lets callers treat the error like a net.Error timeout.
func (e *attemptTimeoutError) Timeout() bool { return true }

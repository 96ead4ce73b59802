package cloudapi

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"time"
)

// Defaults applied by NewTransport to zero-valued Options fields.
const (
	DefaultMaxRetries = 5
	DefaultMinBackoff = 250 * time.Millisecond
	DefaultMaxBackoff = 30 * time.Second
	DefaultTimeout    = 30 * time.Second
)

// Options configures the transport built by NewClient and NewTransport. The
// zero value is usable: no rate limit, default retries, backoff and timeout.
type Options struct {
	// Provider names the cloud provider, e.g. "digitalocean". It is the
	// "provider" metric label and part of the User-Agent.
	Provider string
	// Version is the ccmkit version for the User-Agent; "" means "dev".
	Version string
	// QPS is the token-bucket rate in requests per second; <= 0 disables
	// rate limiting.
	QPS float64
	// Burst is the bucket size; <= 0 means max(1, int(QPS)).
	Burst int
	// MaxRetries is the number of retries after the first attempt; 0 means
	// DefaultMaxRetries and a negative value disables retries.
	MaxRetries int
	// MinBackoff is the backoff before the first retry, doubled for each
	// further retry; 0 means DefaultMinBackoff.
	MinBackoff time.Duration
	// MaxBackoff caps any single wait, including one asked for by
	// Retry-After; 0 means DefaultMaxBackoff.
	MaxBackoff time.Duration
	// Timeout bounds each attempt, including reading its response body;
	// 0 means DefaultTimeout.
	Timeout time.Duration
	// Budget bounds one request as a whole: its attempts, the waits
	// between them and for the rate limiter. No retry starts, and no wait,
	// that would end past it, and an attempt gets at most what is left of
	// it. 0 means twice Timeout (two hung attempts); negative means no
	// bound besides MaxRetries.
	Budget time.Duration
	// Base performs the requests; nil means a new *http.Transport with
	// net/http's defaults (never http.DefaultTransport itself, which
	// another library may have replaced).
	Base http.RoundTripper
	// TLS, when set, is the TLS configuration of the requests (a private CA,
	// a client certificate): applied to a clone of Base, which must then
	// be an *http.Transport (nil is one); with any other Base, Validate
	// fails and so does every request: TLS settings are never dropped.
	TLS *tls.Config
	// Operation names a request's operation for metrics, logs and the
	// Counter; nil means DefaultOperation. WithOperation takes precedence.
	Operation func(*http.Request) string
	// Counter, if set, counts attempts per operation. Requests are always
	// counted in metrics too.
	Counter *Counter
	// Sensitive lists extra header and query parameter names (matched
	// case-insensitively) whose values are redacted, besides the defaults.
	Sensitive []string
}

// withDefaults returns a copy of o with every unset field defaulted.
func (o Options) withDefaults() Options {
	if o.Version == "" {
		o.Version = "dev"
	}
	if o.Burst <= 0 {
		o.Burst = max(1, int(o.QPS))
	}
	switch {
	case o.MaxRetries == 0:
		o.MaxRetries = DefaultMaxRetries
	case o.MaxRetries < 0:
		o.MaxRetries = 0
	}
	if o.MinBackoff <= 0 {
		o.MinBackoff = DefaultMinBackoff
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = DefaultMaxBackoff
	}
	o.MinBackoff = min(o.MinBackoff, o.MaxBackoff)
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Budget == 0 {
		o.Budget = 2 * o.Timeout
	}
	if o.Base == nil {
		o.Base = defaultBase()
	}
	if t, ok := o.Base.(*http.Transport); ok && o.TLS != nil { // Validate rejects the others
		t = t.Clone()
		t.TLSClientConfig = o.TLS.Clone()
		o.Base = t
	}
	if o.Operation == nil {
		o.Operation = DefaultOperation
	}
	return o
}

// Validate reports settings the transport cannot honour: TLS settings with
// a Base that is not an *http.Transport, whose TLS configuration the
// transport cannot reach.
func (o Options) Validate() error {
	if o.TLS == nil || o.Base == nil {
		return nil
	}
	if _, ok := o.Base.(*http.Transport); !ok {
		return fmt.Errorf("cloudapi: TLS settings given with a base transport %T, which is not an *http.Transport: they cannot be applied (give the TLS settings to that transport instead)", o.Base)
	}
	return nil
}

// defaultBase returns a new transport with net/http's defaults (those of
// http.DefaultTransport as net/http builds it): a private one, which
// tuning never shares, and which a library that replaced
// http.DefaultTransport process-wide does not reach.
func defaultBase() *http.Transport {
	return &http.Transport{
		Proxy: http.ProxyFromEnvironment,
		DialContext: (&net.Dialer{
			Timeout:   30 * time.Second,
			KeepAlive: 30 * time.Second,
		}).DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          100,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: 1 * time.Second,
	}
}

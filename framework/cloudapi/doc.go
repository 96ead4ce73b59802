// Package cloudapi builds the HTTP client that every cloud provider's SDK
// uses to talk to its cloud API.
//
// A cloud-controller-manager spends its budget in cloud API calls, and every
// provider needs the same plumbing around them. Instead of each provider
// re-implementing it, the provider hands the SDK an *http.Client built here:
//
//	httpClient := cloudapi.NewClient(cloudapi.Options{
//		Provider: "digitalocean",
//		Version:  version.Get(),
//		QPS:      10,
//	})
//	client := godo.NewClient(httpClient)
//
// SDKs that take an http.RoundTripper instead use NewTransport. Build one
// client per provider and share it: the rate limiter lives in the transport,
// so two clients do not share a budget.
//
// For every request the transport:
//
//   - sets User-Agent to "ccmkit/<version> (<provider>)", followed by the
//     SDK's own User-Agent if it set one;
//   - waits for a token from a token-bucket rate limiter (Options.QPS and
//     Options.Burst);
//   - retries with exponential backoff and full jitter on 429, 500, 502, 503,
//     504 and network errors, honouring Retry-After, up to Options.MaxRetries
//     times, and then returns the last response so the SDK sees the real
//     status and body. POST and PATCH are only retried when that is safe (see
//     IsIdempotent);
//   - bounds each attempt by Options.Timeout (http.Client.Timeout is not used
//     because it would span all retries), and the request as a whole,
//     attempts and waits together, by Options.Budget;
//   - records Prometheus metrics on the legacyregistry served at /metrics:
//     cloudprovider_api_requests_total, cloudprovider_api_request_duration_seconds,
//     cloudprovider_api_rate_limit_wait_seconds and cloudprovider_api_retries_total;
//   - counts attempts per operation in an optional Counter (read by tests and
//     benchmarks);
//   - logs every attempt with the contextual klog logger of the request: one
//     line at V(4), headers at V(6), bodies truncated to 4 KiB at V(8);
//   - keeps the start of an error answer's body as the SDK reads it, so
//     the Answer (status, headers, body) can be classified even when the
//     SDK's error drops part of it (AnswerOf, RecordAnswers).
//
// Credentials never reach the logs or the errors the transport creates:
// sensitive headers, query parameters, URL user information and JSON or form
// fields are redacted with the same functions exported here (RedactURL,
// RedactHeader, RedactBody) for use by other packages. Note that
// http.Client.Do wraps transport errors in a *url.Error carrying the request
// URL with only its password removed, so credentials belong in headers, never
// in the query string.
//
// Two rules every provider needs are here too, so that each cloud adds
// only what is its own. NotFoundRule decides when an answer is the API's
// authoritative "this resource does not exist" (a request naming one
// resource, the cloud's not-found status, the API's own JSON error body,
// and the provider's resource-level condition), so a proxy's 404 page
// never deletes a Node. Pager reads a paginated list in any cursor style
// (page number, offset, marker, link) with a page bound and guards against
// next links pointing back and empty pages that claim more; any failure
// fails the whole list.
//
// Operations name requests in metrics and in the Counter. DefaultOperation
// derives a bounded-cardinality name such as "GET /v2/droplets/{id}" from the
// request; WithOperation overrides it for one call.
package cloudapi

// Package simkit is what every simulated cloud (the providers' <cloud>sim
// packages) does alike, so that a simulator holds only its cloud's
// endpoints, resources, JSON shapes and error bodies.
//
// # Requests
//
// A simulator's Server embeds Base, which holds the Kit, and keeps its own
// state behind its own mutex:
//
//	s.Base = simkit.NewBase(simkit.Options{
//		Common:    opts.Common, // faults, latency, seed, logger: the simulator's Options embed them
//		ErrorBody: apiErrors.ErrorBody,
//		Auth:      func(r *http.Request) *simkit.Response { ... nil when authorized ... },
//		Lock:      &s.mu,
//	}, s.State)
//	s.Handle("GET /v2/things/{id}", s.getThing)
//	s.NotFound(func(r *http.Request) simkit.Response { return apiErrors.Error(http.StatusNotFound, "no endpoint %s", r.URL.Path) })
//
// An endpoint's operation ("GET /v2/things/{id}") is its ServeMux pattern:
// it names the endpoint in Stats, in the request log and in Fault.Op.
//
// Per request, in order: the operation is counted; the body is buffered
// (at most Options.MaxBodyBytes); the latency (SetLatency) plus the
// fault's Delay is served; a matching fault answers instead of the
// endpoint (an error status with the simulator's error body and, for the
// statuses Options.RetryAfterOn names, a Retry-After header; a page of
// someone else's; or a closed connection, once the request is logged);
// Auth rejects unauthenticated requests (endpoints registered with NoAuth
// skip it); a body over the limit gets 413; the handler runs; a successful
// (2xx) request whose method is not GET or HEAD counts as a write (unless
// registered with NoWrite); the request is logged.
//
// Options hooks let a simulator keep its cloud's ways: ErrorBody writes
// the cloud's error body from an ErrorInfo (a fault's Code and Message, ""
// for the cloud's usual ones), Respond sees every answer before it goes
// out (DigitalOcean's rate-limit headers and request IDs), Lock is the
// state mutex handlers run under, and WritesAnyStatus counts failed writes
// too. Every simulator's Fault is simkit's Fault. ErrorFormat is a cloud's
// error codes, fault messages and error body, from which its error answers
// and its ErrorBody come; Answer adapts endpoints written as (status,
// body).
//
// A simulator's Server embeds Base for what every Server exports alike
// (Start, Close, URL, Handler, the Kit's counters, faults, latency and
// connection resets, /_sim/stats and /_sim/state), and Bearer for a
// rotating bearer token (Authenticate is its Options.Auth). Its Cloud type
// is the Server plus the provider-neutral methods of Cloud, the view the
// conformance suite (through frameworktest.SimCloud) and
// internal/cluster drive: the simulator writes AddInstance,
// DeleteInstance, ShutdownInstance, LoadBalancers and Env, and embeds
// NoCloudConfig and NoRoutes for a cloud without them; its
// StartCloud(Common) starts one (Started), so that registering a cloud
// there is one line.
//
// # Cloud behaviour
//
// Lifecycle settles asynchronous resources after N reads or on Advance,
// and, with Common.SettleAfter (cmd/cloudsim turns it on), with time as
// the real cloud does; tests leave time off. PageByNumber (?page=&per_page=), PageByMarker
// (?marker=&limit=, and Rancher's ?limit= with a next link) and
// PageByOffset (?offset=&limit=) read the clouds' pagination styles, and
// PageLink builds links to other pages.
//
// Authentication: Bearer and HasBearer (a rotating bearer token),
// BasicAuth (HTTP Basic, such as Rancher's API keys), OAuth2 (a token
// endpoint with the client-credentials, password and refresh grants and
// expiring bearer tokens, as Brightbox's) and HTTPSignature (draft-cavage
// HTTP Signatures with RSA, ECDSA and Ed25519 keys, as Triton's CloudAPI
// verifies them).
//
// Scenario files: a simulator's Scenario embeds ScenarioHeader (provider,
// description, seed, latency, provisioningReads and faults), and its
// Scenarios value says how the rest is checked and seeded: Load decodes
// (strict YAML) and validates a file, reporting every problem at once;
// NewServer builds the Server from one. Operations (ServedOperations for
// a simulator's endpoints) resolves a fault's operation; RecoverRefusal
// turns an Add* method's refusal into Apply's error.
//
// Besides: Listener, TB and StartForTest for a Server's NewServer; Decode,
// DecodeStrict, DecodeOptional and PositiveInt for requests; Table and
// CloneAll for the resources a simulator holds.
//
// simkit imports no cloud SDK and nothing of the framework, so any
// simulator can use it and stays light: cmd/cloudsim serves every
// simulated cloud without the Kubernetes libraries.
package simkit

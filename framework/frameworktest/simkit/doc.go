// Package simkit is the cloud-independent machinery of the simulated clouds
// (the providers' <cloud>sim packages): one wrapper around every API
// endpoint that counts it, delays it, injects faults, authenticates it and
// logs it, plus JSON helpers.
//
// A simulator builds a Kit, registers its endpoints with Handle and keeps
// its own state behind its own mutex:
//
//	k := simkit.New(simkit.Options{
//		ErrorBody: func(r *http.Request, op string, status int, msg string) any {
//			return map[string]any{"message": msg}
//		},
//		Auth: func(r *http.Request) *simkit.Response { ... nil when authorized ... },
//	})
//	k.Handle(mux, "GET /v2/things/{id}", s.getThing)
//	mux.HandleFunc("GET /_sim/stats", k.ServeStats)
//
// An endpoint's operation ("GET /v2/things/{id}") is its ServeMux pattern:
// it names the endpoint in Stats, in the request log and in Fault.Op.
//
// Per request, in order: the operation is counted; the latency (SetLatency)
// plus the fault's Delay is served; a matching fault answers instead of the
// endpoint (an error status with the simulator's error body and, for 429,
// a Retry-After header; or a closed connection); Auth rejects
// unauthenticated requests (endpoints registered with NoAuth skip it); the
// body is buffered (at most Options.MaxBodyBytes); the handler runs; a
// successful (2xx) request whose method is not GET or HEAD counts as a
// write (unless registered with NoWrite); the request is logged.
//
// Options hooks let a simulator keep its cloud's ways: Respond sees every
// answer before it goes out (DigitalOcean's rate-limit headers and
// request IDs), Lock is the state mutex handlers run under, and
// WritesAnyStatus counts failed writes too. A simulator whose faults carry
// more than Fault (an error code, its own default messages) keeps its own
// Fault type and converts it, setting Body and NoRetryAfter.
//
// A simulator's Server embeds Base for what every Server exports alike
// (Start, Close, URL, Handler, the Kit's counters and its latency and
// connection-reset controls, /_sim/stats and /_sim/state), and Bearer for a
// rotating bearer token, which its Auth checks with HasBearer.
//
// Besides: Listener, TB and StartForTest for a Server's NewServer; Decode,
// DecodeStrict and PositiveInt for requests; and for scenario files
// LoadScenario (strict YAML, every problem at once), ScenarioFault and
// ResolveOperation.
//
// simkit imports no cloud SDK and nothing of the framework, so any
// simulator can use it.
package simkit

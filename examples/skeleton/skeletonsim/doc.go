// Package skeletonsim simulates Skeleton Cloud, the tiny JSON-over-HTTP
// cloud API that the skeleton provider talks to. It is the pattern every
// provider's simulator follows: state in memory, served at the root of its
// own loopback listener, asynchronous resources that advance on reads or on
// Advance (and, with Options.SettleAfter, as cmd/cloudsim sets it, with
// time), injectable faults, and a request log.
//
//	sim := skeletonsim.NewServer(t, skeletonsim.Options{})
//	inst := sim.LaunchInstance(skeletonsim.Instance{Name: "node-1"})
//	env := sim.Env(sim.URL())     // SKELETON_API_URL and SKELETON_TOKEN for the provider
//	sim.Advance()                 // provisioning load balancers become active
//	sim.Fail(503)                 // every API call fails until the returned func runs
//	got := sim.State()            // what the cloud holds, for go-cmp
//
// AddInstance stores an instance exactly as given; LaunchInstance fills in
// a type, region, zone and addresses as the cloud would. Cloud adapts the
// server to simkit.Cloud, the provider-neutral interface of the
// conformance suite (through frameworktest.SimCloud), the end-to-end suite
// and the benchmarks; StartCloud starts one for them. A Scenario
// (YAML, see LoadScenario) seeds a server with instances, load balancers,
// latency and faults; cmd/cloudsim serves one from the command line.
//
// # API reference
//
// Every endpoint under /v1 needs "Authorization: Bearer <token>"; a missing
// or wrong token gets 401. Responses are application/json. Errors look like
//
//	{"error": {"code": "not_found", "message": "load balancer \"lb-000009\" not found"}}
//
// with code bad_request (400: malformed JSON, unknown fields, bad query
// parameters), unauthorized (401), request_entity_too_large (413: a body
// over 1 MiB), not_found (404: the resource does not
// exist), unknown_endpoint (404: no such method and path), conflict (409),
// unprocessable_entity (422: a well-formed but invalid spec, with every
// problem in the message), rate_limited (429, with Retry-After) or
// internal_error (500).
//
// Lists are paginated with ?page= (from 1) and ?per_page= (default 50, at
// most 200) and carry
//
//	"meta": {"page": 1, "per_page": 50, "total": 120, "next_page": 2}
//
// where next_page is 0 on the last page.
//
// Instances (read-only; tests create them with AddInstance or LaunchInstance):
//
//	GET /v1/instances               {"instances": [Instance...], "meta": ...}
//	GET /v1/instances/{id}          {"instance": Instance}; 404 when gone
//
//	Instance: {"id": "i-000001", "name": "node-1", "type": "s-2", "region": "sk-1",
//	           "zone": "sk-1a", "status": "running"|"stopped",
//	           "private_ipv4": "10.0.0.2", "public_ipv4": "203.0.113.2",
//	           "public_ipv6": "2001:db8::2"}
//
// Load balancers:
//
//	POST   /v1/load-balancers       body LoadBalancerSpec -> 201 {"load_balancer": LoadBalancer}
//	GET    /v1/load-balancers       ?tag=<tag> keeps those carrying the tag
//	                                -> {"load_balancers": [...], "meta": ...}
//	GET    /v1/load-balancers/{id}  -> {"load_balancer": LoadBalancer}
//	PUT    /v1/load-balancers/{id}  body LoadBalancerSpec (full replace) -> 200
//	DELETE /v1/load-balancers/{id}  -> 204
//
//	LoadBalancerSpec: {"name": "a1b2", "algorithm": "round_robin"|"least_connections",
//	    "listeners": [{"protocol": "TCP"|"UDP", "port": 80, "target_port": 30080}],
//	    "health_check": {"protocol": "tcp"|"http", "port": 30080, "path": "/healthz",
//	                     "interval_seconds": 10},
//	    "proxy_protocol": false, "members": ["i-000001"], "tags": ["owner:me"]}
//	LoadBalancer: {"id": "lb-000001", <LoadBalancerSpec fields>,
//	    "status": "provisioning"|"active"|"error", "error_message": "...",
//	    "ipv4": "198.18.0.1"}
//
// A new load balancer is "provisioning". Its ProvisioningReads-th read (2 by
// default; a GET or a list page that holds it) finds it "active" with an
// ipv4 address, as does Advance, or time: Options.SettleAfter after it
// started. While it is provisioning, PUT answers 409 conflict. Validation (422) requires a name, a known algorithm, at least
// one listener, ports in 1-65535, no two listeners on the same protocol and
// port, a health-check path (starting with /) exactly when the protocol is
// http, an interval of 1-300 seconds and members that are existing
// instances. An empty algorithm means
// round_robin; an empty health check means tcp on the first listener's
// target port every 10 seconds.
//
// Routes:
//
//	GET    /v1/routes               ?tag=<tag> -> {"routes": [Route...], "meta": ...}
//	POST   /v1/routes               {"destination_cidr": "10.244.1.0/24",
//	                                 "target_instance_id": "i-000001", "tags": [...]}
//	                                -> 201 {"route": Route}
//	DELETE /v1/routes/{id}          -> 204
//
// A route's target must exist when it is created (422 otherwise) and its
// destination must not be another route's (409). Deleting the instance
// leaves the route in place, pointing nowhere.
//
// Simulator endpoints, without authentication, for cmd/cloudsim and humans:
//
//	GET /_sim/stats                 {"requests": 12, "writes": 3, "operations": {"GET /v1/instances": 4, ...},
//	                                 "latency_ms": 30, "injected_latency_ms": 360}
//	GET /_sim/state                 Snapshot
//
// latency_ms is the current SetLatency; injected_latency_ms the total delay
// served so far, from latency and from faults.
//
// # Faults
//
// Inject adds a Fault (simkit's): an HTTP status with the error body (and
// a Retry-After header when it sets RetryAfter), latency, or a reset
// connection, for every endpoint or one ("PUT /v1/load-balancers/{id}"),
// for a number of requests or a random fraction of them (seeded, so
// scenarios repeat). Fail, RateLimit (429 with Retry-After),
// ResetConnections and SetLatency are shorthands. Options.Faults and
// Options.Latency inject them from the start, as a scenario file does.
//
// Stats counts every request per endpoint; Writes counts the non-GET
// requests that were actually served (authorized and not faulted), which
// is what "zero writes on a no-op" tests assert.
//
// The machinery behind all this (faults, latency, the request log, stats,
// body buffering, the listener, endpoint registration and the catch-all
// 404, pagination, the provisioning lifecycle, error formats, loading and
// seeding scenarios, the Cloud adapter's defaults) is
// framework/frameworktest/simkit's, shared by every simulator; this
// package keeps what is Skeleton Cloud's: routes, resources, JSON shapes,
// the error codes and bearer auth.
package skeletonsim

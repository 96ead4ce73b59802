// Package dosim is a simulated DigitalOcean API v2: the subset a
// cloud-controller-manager uses, close enough that the real godo client
// (v1.236.0) talks to it unchanged. State lives in memory; tests never need
// credentials or the internet.
//
// Serve it at the root of its own listener (godo mixes absolute and
// relative paths, so a path prefix breaks half the calls):
//
//	s := dosim.NewServer(t, dosim.Options{})
//	hc := oauth2.NewClient(ctx, oauth2.StaticTokenSource(&oauth2.Token{AccessToken: s.Token()}))
//	c, _ := godo.New(hc, godo.SetBaseURL(s.URL()+"/"))
//
// # Endpoints
//
//	GET    /v2/account
//	GET    /v2/regions                          paginated
//	GET    /v2/droplets                         paginated; tag_name=, name= (exact, case-insensitive)
//	GET    /v2/droplets/{id}
//	GET    /v2/load_balancers                   paginated; names= and uuids= (repeatable)
//	POST   /v2/load_balancers                   202, status "new"; validate_only honoured
//	GET    /v2/load_balancers/{id}
//	PUT    /v2/load_balancers/{id}              full replace
//	DELETE /v2/load_balancers/{id}              204
//	POST   /v2/load_balancers/{id}/droplets     204; {"droplet_ids":[…]}
//	DELETE /v2/load_balancers/{id}/droplets     204
//	POST   /v2/load_balancers/{id}/forwarding_rules    204; {"forwarding_rules":[…]}
//	DELETE /v2/load_balancers/{id}/forwarding_rules    204
//	GET    /v2/certificates                     paginated; name= (exact)
//	GET    /v2/certificates/{id}
//	GET    /v2/tags                             paginated
//	POST   /v2/tags                             201; creating an existing tag returns it
//	GET    /v2/tags/{name}
//	DELETE /v2/tags/{name}                      204; untags everything
//	POST   /v2/tags/{name}/resources            204; droplet and load_balancer resources
//	DELETE /v2/tags/{name}/resources            204
//	GET    /v2/firewalls                        paginated
//	POST   /v2/firewalls                        202, status "succeeded"
//	GET    /v2/firewalls/{id}
//	PUT    /v2/firewalls/{id}                   full replace
//	DELETE /v2/firewalls/{id}                   204
//
// and, outside the API (no auth, no faults, not logged):
//
//	GET /_sim/stats   requests per operation, writes, latency
//	GET /_sim/state   a Snapshot of everything the cloud holds
//
// # Behaviour
//
// Auth: every API request needs "Authorization: Bearer <token>"; anything
// else gets 401 {"id":"unauthorized","message":"Unable to authenticate
// you."}. SetToken rotates the token.
//
// Errors are JSON {"id","message","request_id"} with the API's ids
// (not_found, unprocessable_entity, too_many_requests, server_error, …);
// an unknown resource is 404 "The resource you were accessing could not be
// found.". Every response, errors included, carries Content-Type
// application/json, RateLimit-Limit (5000), RateLimit-Remaining (counting
// down per request) and RateLimit-Reset (unix seconds), and X-Request-Id.
//
// Pagination: page (from 1) and per_page (default 20, at most 200); the
// body has links.pages {first, prev, next, last} as absolute URLs back to
// the server that keep the request's filters (first and prev from page 2
// on, next and last up to the second-to-last page, so godo's
// Links.CurrentPage and IsLastPage work) and meta.total.
//
// Droplets are added with AddDroplet (or Cloud().AddInstance): deterministic
// IDs from 100000001, private and public IPv4 and public IPv6, size
// s-2vcpu-4gb, the Options region; SetDropletStatus("off") powers one off.
//
// Load balancers: POST answers 202 with status "new" and no ip; the
// Options.ProvisioningReads-th read (GET of it, or a list page holding it;
// default 2) returns it "active" with an ip, plus an ipv6 when
// network_stack is DUALSTACK. Advance makes every "new" one active at once;
// SetLoadBalancerStatus sets "errored". PUT replaces the whole spec (what a
// request leaves out gets the API default) and keeps status and addresses.
// The size slug is the JSON field "size" as in godo. Defaults: algorithm
// round_robin, type REGIONAL, network EXTERNAL, network_stack IPV4,
// size_unit 1 (without size), sticky_sessions none, health check http on
// the first non-UDP target port, path /, 10 s interval, 5 s timeout,
// thresholds 5/3, http_idle_timeout_seconds 60. AddLoadBalancer stores one
// as if made earlier by someone else.
//
// Validation (422 unprocessable_entity), on POST and PUT: region required
// and known; at least one forwarding rule; protocols (entry http, https,
// http2, http3, tcp, udp; target http, https, http2, tcp, udp) and ports
// 1-65535; UDP on both sides or neither; an entry port used twice (a TCP
// and a UDP rule may share one); https/http2/http3 entry needs a
// certificate_id of an existing certificate or tls_passthrough, which needs
// https on both sides and no certificate_id; size and size_unit exclusive,
// size one of lb-small/medium/large, size_unit at most 200; type, network,
// network_stack and algorithm enums; tag and droplet_ids exclusive; every
// droplet must exist; health check protocol http/https/tcp, interval and
// timeout 3-300, thresholds 2-10, path only with http(s) and starting with
// /, and its port may not be a port forwarded to only as UDP; sticky
// sessions none or cookies (with cookie_name and cookie_ttl_seconds);
// http_idle_timeout_seconds 30-600; firewall rules "ip:<addr>" or
// "cidr:<block>". Firewalls: a valid name, tcp/udp/icmp rules, ports a
// port, a range, "0" or "all", at least one source/destination, existing
// droplets and tags.
//
// Faults: Inject (per endpoint, counted, at a seeded Rate), Fail,
// RateLimit (429 too_many_requests with Retry-After; every injected 429
// has one, "0" by default), ResetConnections, SetLatency and Options.Latency.
// Stats counts requests per operation (e.g. "GET /v2/droplets/{id}"),
// Writes the non-GET requests that reached an endpoint, Requests is the
// request log.
//
// The cloud-independent machinery (faults, latency, the request log and
// stats, body buffering, the listener, pagination, the provisioning
// lifecycle, the scenario header) is framework/frameworktest/simkit's;
// this package keeps DigitalOcean's routes, resources, JSON shapes, error
// body ({"id","message","request_id"}), rate-limit headers and bearer auth.
// A body over 1 MiB gets 413.
//
// Cloud returns the server as a simkit.Cloud (frameworktest.SimCloud makes
// it the conformance suite's), StartCloud starts one; Env is the
// environment (DO_ACCESS_TOKEN, DO_OVERRIDE_URL, REGION) the provider
// reads.
//
// Scenarios: LoadScenario and NewFromScenario seed a server from YAML
// (droplets, certificates, load balancers, faults; see Scenario), the hook
// cmd/cloudsim uses to serve a cloud.
package dosim

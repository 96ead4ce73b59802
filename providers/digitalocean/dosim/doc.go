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
//	DELETE /v2/droplets?tag_name=               204; every droplet with the tag
//	GET    /v2/droplets/{id}
//	DELETE /v2/droplets/{id}                    204
//	GET    /v2/droplets/{id}/firewalls          paginated; by ID or by one of its tags
//	POST   /v2/droplets/{id}/actions            201, status "in-progress"
//	GET    /v2/droplets/{id}/actions            paginated, newest first
//	GET    /v2/droplets/{id}/actions/{action}
//	GET    /v2/actions                          paginated, newest first
//	GET    /v2/actions/{action}
//	GET    /v2/sizes                            paginated
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
//	POST   /v2/tags/{name}/resources            204; droplet, load_balancer, volume, volume_snapshot
//	DELETE /v2/tags/{name}/resources            204
//	GET    /v2/firewalls                        paginated
//	POST   /v2/firewalls                        202, status "waiting"
//	GET    /v2/firewalls/{id}
//	PUT    /v2/firewalls/{id}                   full replace, status "waiting"
//	DELETE /v2/firewalls/{id}                   204
//	POST   /v2/firewalls/{id}/droplets          204; {"droplet_ids":[…]}
//	DELETE /v2/firewalls/{id}/droplets          204
//	POST   /v2/firewalls/{id}/tags              204; {"tags":[…]}
//	DELETE /v2/firewalls/{id}/tags              204
//	POST   /v2/firewalls/{id}/rules             204; {"inbound_rules":[…],"outbound_rules":[…]}
//	DELETE /v2/firewalls/{id}/rules             204
//	GET    /v2/volumes                          paginated; name= and region= (each narrows; both: one volume)
//	POST   /v2/volumes                          201, droplet_ids []
//	DELETE /v2/volumes?name=&region=            204
//	GET    /v2/volumes/{id}
//	DELETE /v2/volumes/{id}                     204; 409 while attached
//	POST   /v2/volumes/{id}/actions             202, status "in-progress"; attach, detach, resize
//	POST   /v2/volumes/actions                  202; attach, detach by volume_name (+ region)
//	GET    /v2/volumes/{id}/actions             paginated, newest first
//	GET    /v2/volumes/{id}/actions/{action}
//	GET    /v2/volumes/{id}/snapshots           paginated
//	POST   /v2/volumes/{id}/snapshots           201
//	GET    /v2/snapshots                        paginated; resource_type= (droplet, volume), region=
//	GET    /v2/snapshots/{id}
//	DELETE /v2/snapshots/{id}                   204
//
// and, outside the API (no auth, no faults, not logged):
//
//	GET /_sim/stats   requests per operation, writes, latency
//	GET /_sim/state   a Snapshot of everything the cloud holds
//	GET /_sim/metadata/{droplet}/metadata/v1.json, /_sim/metadata/{droplet}/metadata/v1/...
//	                  the droplet metadata service as that droplet sees it (MetadataHandler)
//
// # Behaviour
//
// Auth: every API request needs "Authorization: Bearer <token>", the
// token or one of Options.Tokens (more tokens of the same team; a
// scenario's tokens:); anything else gets 401
// {"id":"unauthorized","message":"Unable to authenticate you."}.
// SetToken rotates the token.
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
// IDs from 100000001, size s-2vcpu-4gb, the Options region;
// SetDropletStatus("off") powers one off. A droplet's memory, vcpus and
// disk, and its size object (prices, regions, disk_info), are those of its
// size slug in the sizes table GET /v2/sizes serves: DigitalOcean's own
// slugs and figures (s-1vcpu-512mb-10gb, s-1vcpu-1gb, s-1vcpu-2gb,
// s-2vcpu-2gb, s-2vcpu-4gb, s-4vcpu-8gb, s-8vcpu-16gb, g-2vcpu-8gb,
// g-4vcpu-16gb, c-2, c-4, m-2vcpu-16gb), offered in every region. Its
// addresses, derived from the ID, are a public IPv4 in DigitalOcean's own
// public blocks (104.131.0.0/16, 159.203.0.0/16, …; never the shared
// 100.64.0.0/10 nor RFC 1918) in a /20 whose first address is the
// gateway, a private 10.x IPv4 (netmask 255.255.0.0, no gateway, as the
// API gives a private interface none) and a public IPv6. DELETE removes a
// droplet at once; it leaves its firewalls (its load balancers keep it
// until updated).
//
// Droplet actions (POST /v2/droplets/{id}/actions, openapi
// dropletActions_post.yml): power_off, shutdown, power_on, reboot,
// power_cycle, resize (size, disk; only powered off, as DigitalOcean
// requires), rename (name), snapshot (adds a snapshot_ids entry and a
// snapshot of resource_type "droplet" under /v2/snapshots),
// enable_ipv6, enable_backups, disable_backups, password_reset; another
// type is 422. It answers 201 with the action "in-progress"; the action
// completes, and only then changes the droplet, on its
// Options.ProvisioningReads-th read (GET /v2/actions/{id}, as doctl
// --wait polls, or the droplet's action), on Advance, or SettleAfter
// after it started. A droplet with an action in progress (its own, or a
// volume being attached to it or detached from it) refuses another (422
// "Droplet already has a pending event."); deleting the droplet ends its
// action "errored", detaches its volumes (they outlive it) and ends an
// attach to it or detach from it "errored".
//
// Load balancers: POST answers 202 with status "new" and no ip; the
// Options.ProvisioningReads-th read (GET of it, or a list page holding it;
// default 2) returns it "active" with an ip, plus an ipv6 when
// network_stack is DUALSTACK. Advance makes every "new" one active at once;
// SetLoadBalancerStatus sets "errored". One that targets droplets by tag
// answers in droplet_ids the droplets carrying the tag at that moment, as
// the API does (openapi load_balancers/responses/examples.yml). PUT replaces the whole spec (what a
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
// network_stack and algorithm enums; tag a tag name (as POST /v2/tags
// checks it) and exclusive with droplet_ids; every
// droplet must exist; health check protocol http/https/tcp, interval and
// timeout 3-300, thresholds 2-10, path only with http(s) and starting with
// /, and its port may not be a port forwarded to only as UDP; sticky
// sessions none or cookies (with cookie_name and cookie_ttl_seconds);
// http_idle_timeout_seconds 30-600; firewall rules "ip:<addr>" or
// "cidr:<block>". Firewalls: a valid name, tcp/udp/icmp rules, ports a
// port, a range or "all" ("0" is refused: "You must specify a positive
// value for ports.", doctl issue 247, api-v2 issue 171), action allow or
// deny, at least one source/destination, existing droplets and tags.
//
// Firewalls answer as the API does (openapi firewalls/models/firewall.yml
// and firewall_rule.yml, godo's firewalls_test.go, godo issue 149): the
// ports of a rule sent as "all" come back "0", and every ICMP rule's are
// "0". A create, update or sub-resource change leaves the firewall
// "waiting", with a pending_changes entry {droplet_id, removing, status:
// "waiting"} for each droplet it applies to (by ID or tag) and, removing,
// each it no longer does; its Options.ProvisioningReads-th read (GET of
// it, a list page holding it), Advance, or SettleAfter settles it to
// "succeeded" with pending_changes []. DELETE …/rules removes the rules
// equal to the request's, "all" matching "0".
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
// Asynchronous work (load balancers provisioning, firewall changes,
// droplet and volume actions) settles on reads or Advance, so tests need no sleep,
// and, with Options.SettleAfter (cmd/cloudsim's --settle-after, a
// scenario's settleAfter), also that long after it started, read or not,
// as the real cloud moves on.
//
// Scenarios: LoadScenario and NewFromScenario seed a server from YAML
// (tokens, droplets, certificates, load balancers, volumes,
// volumesPerDroplet, faults; see Scenario),
// the hook cmd/cloudsim uses to serve a cloud.
//
// # Volumes
//
// Block storage as godo's StorageService, StorageActionsService and
// SnapshotsService (storage.go, storage_actions.go, snapshots.go) and
// doctl use it; shapes from openapi specification/resources/volumes and
// snapshots. A volume (godo.Volume's JSON) is created detached, droplet_ids
// []. Create rules (422 unprocessable_entity unless said): name 1-64
// lowercase letters, digits and "-", starting with a letter
// (volumes/models/volume_base.yml); region known and size_gigabytes 1 to
// 16384 (16 TiB), both required without snapshot_id; with snapshot_id
// (404 when there is no such volume snapshot) both default to the
// snapshot's region and min_disk_size, the region must be one of the
// snapshot's and the size at least its min_disk_size; filesystem_type
// ext4 or xfs, filesystem_label only with it and at most 16 (ext4) or 12
// (xfs) characters (volumes_ext4.yml, volumes_xfs.yml); tags as tags are;
// one name per region ("You can only create one volume per region with
// the same name", volumes_list.yml): 409 "already exists", as the API
// answered (hashicorp/terraform issue 8023). DELETE of an attached volume
// is 409 "A volume that's attached to a Droplet cannot be deleted. Please
// detach it first before deleting." (hashicorp/terraform issue 17964); of
// one with an action in progress 422 "Droplet already has a pending
// event."; its snapshots stay.
//
// Volume actions answer 202 with the action "in-progress" (type
// attach_volume, detach_volume or resize_volume, resource_type "volume",
// resource_id null as volumes/models/volumeAction.yml has it, the
// volume's region) and are listed under the volume and in /v2/actions
// (doctl --wait polls GET /v2/actions/{id}). Like droplet actions they
// complete on their Options.ProvisioningReads-th read (of the volume's
// action or GET /v2/actions/{id}), on Advance, or SettleAfter after they
// started, and only then change anything: an attach puts the droplet in
// the volume's droplet_ids and the volume in the droplet's volume_ids, a
// detach takes them out, a resize sets size_gigabytes. Refused with 422
// and the messages godo's storage.go names and csi-digitalocean's
// controller matches: another action in progress on the volume, or on
// the droplet (a droplet action or another attach/detach), "Droplet
// already has a pending event."; an attach of a volume attached anywhere
// "This volume is already attached"; an attach beyond
// Options.VolumesPerDroplet (default 15: "up to fifteen volumes may be
// attached to a Droplet at a time", volumes/volumeActions_post_byId.yml)
// "cannot attach more volumes to the Droplet"; a detach from a droplet
// it is not attached to, or without droplet_id (godo issue 102, doctl
// issue 207), "Attachment not found". Also 422: a droplet in another
// region than the volume, a region other than the volume's, a resize
// that does not grow ("Volumes may only be resized upwards") or goes
// past 16384 GiB ("The maximum size for a volume is 16TiB."), an unknown
// type, and a resize by name (by ID only, openapi pull request 376); 404:
// an unknown droplet or volume. Resizing works attached or not.
//
// Snapshots: POST /v2/volumes/{id}/snapshots answers 201 with the
// snapshot at once (attached or not): id a UUID, regions the volume's,
// resource_type "volume", resource_id the volume, min_disk_size and
// size_gigabytes its size, tags; no name is 400, a name another volume
// snapshot has is 409 (csi-digitalocean's CreateSnapshot relies on it).
// Droplet snapshots (number IDs) come from the snapshot action;
// GET /v2/snapshots lists both. A deleted volume leaves its snapshots.
//
// The Hypervisor (Options.Hypervisor, simkit.Hypervisor; nil: none) is
// called with the state lock held, after the state changes: Create on
// POST /v2/volumes (with the snapshot ID when restoring) and AddVolume;
// Attach, Detach and Resize when those actions complete (and Attach in
// AddVolume), with simkit.Disk{ID, ByIDName "scsi-0DO_Volume_<name>",
// SizeBytes size_gigabytes<<30, Server the droplet ID in decimal, "" when
// detached}; Snapshot on POST .../snapshots; DeleteSnapshot on DELETE of
// a volume snapshot; Delete on DELETE of a volume; Detach for each volume
// of a droplet being deleted (its error ignored). A failing Create,
// Snapshot, DeleteSnapshot or Delete fails the request with 500 and
// changes nothing; a failing Attach, Detach or Resize puts the volume
// back as it was and ends the action "errored", as the API reports a
// failed action.
//
// The droplet metadata service (http://169.254.169.254/metadata/v1,
// docs.digitalocean.com/reference/api/metadata) answers each droplet
// about itself, so it is served per droplet: MetadataHandler(id) at the
// root of a listener of its own (what github.com/digitalocean/go-metadata
// needs: its WithBaseURL keeps only the scheme and host), or
// /_sim/metadata/{id}/ on the Server. /metadata/v1.json holds droplet_id,
// hostname, region, interfaces, dns, tags, … (go-metadata's Metadata,
// from which csi-digitalocean's node plugin takes its node ID and
// region); /metadata/v1/id, /region, /hostname, /tags/,
// /interfaces/public/0/ipv4/address and the rest are text; an index
// without its trailing slash is a 301 to it; no auth.
//
// Not simulated: the account's volume_limit (GET /v2/account says 100,
// nothing enforces it) and snapshot capacity ("capacity limit
// exceeded"), volumes on POST /v2/droplets (droplets are added with
// AddDroplet), GET/DELETE /v2/volumes/snapshots/{id} (the same snapshots
// as /v2/snapshots/{id}; godo does not use them), attach tags, and
// messages the API's sources do not show (validation wording above other
// than the quoted ones is the simulator's own).
//
// # Fidelity
//
// Checked with DigitalOcean's own CLI, doctl 1.166.0 (built from the Go
// module github.com/digitalocean/doctl@v1.166.0 in its own module), unchanged,
// against cmd/cloudsim on hack/fidelity/digitalocean.yaml with
// --api-url and -t (make fidelity; hack/fidelity/digitalocean.sh): account
// get (with both of the scenario's tokens, and a wrong one refused),
// compute region list, size list, droplet list (all, by tag), droplet get,
// droplet-action power-off/power-on/reboot --wait and power-cycle with
// action get, droplet delete, tag create/list/get/delete, load-balancer
// create --wait/get/update/add-droplets/list/delete by droplet IDs and by
// tag, firewall create/get/add-droplets/add-tags/add-rules/list-by-droplet/
// remove-rules/remove-droplets/remove-tags/delete, certificate list, and
// a tag list of 205 tags over two pages of 200. Result: every check passes.
// Volumes, snapshots and the metadata service were not part of that run:
// they are checked with godo only (volumes_test.go drives a whole volume
// life with it).
// The provider's own client is godo v1.236.0, which every test here uses.
package dosim

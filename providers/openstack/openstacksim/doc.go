// Package openstacksim is a simulated OpenStack cloud: Keystone v3, Nova,
// Neutron, Octavia, Glance and Cinder (Block Storage v3), the subset a
// cloud-controller-manager and a CSI driver use and what they advertise,
// close enough that the real gophercloud/v2 client (v2.15.0) and the
// official OpenStack client talk to it unchanged. State lives in memory; tests never need credentials or the
// internet.
//
//	s := openstacksim.NewServer(t, openstacksim.Options{})
//	pc, _ := openstack.AuthenticatedClient(ctx, gophercloud.AuthOptions{
//		IdentityEndpoint: s.AuthURL(), Username: openstacksim.DefaultUsername,
//		Password: openstacksim.DefaultPassword, DomainName: "Default",
//		TenantName: openstacksim.DefaultProject, AllowReauth: true,
//	})
//	nova, _ := openstack.NewComputeV2(pc, gophercloud.EndpointOpts{Region: s.Region()})
//
// CloudConfig returns the cloud.conf a CCM needs (also served at
// /_sim/cloud.conf), Env the OS_* variables.
//
// # Services
//
// One listener serves every service under its own prefix, and Keystone's
// catalog advertises absolute URLs back to the server (public, internal and
// admin, in Options.Region):
//
//	/identity        Keystone: GET / is 300 with the version list
//	                 (v3.14 stable); POST /v3/auth/tokens (password,
//	                 application_credential or token method; project,
//	                 domain or no scope) answers 201 with the token in
//	                 X-Subject-Token; GET/HEAD validate, DELETE revokes
//	/compute/v2.1    Nova (versioned catalog URL, no discovery): microversions
//	                 2.1 … 2.96, negotiated per request
//	/network         Neutron: GET / is the version document gophercloud's
//	                 NewNetworkV2 needs; GET /v2.0/ lists the core
//	                 resources; resources under /network/v2.0
//	/load-balancer   Octavia: GET / lists v2.0 … v2.<OctaviaMinor>, each
//	                 linking to /v2; resources under /v2/lbaas and
//	                 /v2.0/lbaas alike
//	/image           Glance: GET / is 300 with v2.0 … v2.15 (GET /versions
//	                 200); resources under /image/v2
//	/volume          Cinder: GET / is 300 and GET /v3/ 200 with v3.0
//	                 (microversions 3.0 … 3.70, negotiated per request);
//	                 resources under /volume/v3/<project ID>, the catalog
//	                 URL of types block-storage (gophercloud's
//	                 NewBlockStorageV3, openstacksdk) and volumev3
//	                 (cinderclient), and, as since 3.67, /volume/v3
//
// Every other request needs a valid X-Auth-Token (tokens expire after
// Options.TokenTTL, or all at once with ExpireTokens): otherwise 401 with
// Keystone's error body, which makes gophercloud re-authenticate when
// AllowReauth is set. SetPassword and DeleteApplicationCredential revoke
// the tokens of the user or the application credential, as Keystone does,
// so a client must request a new token with the new credential
// (Cloud.RotateSecret changes the first user's password).
//
// OtherProject serves a second project of the same cloud on the same URL
// and Keystone (Cloud.OtherAccount gives its cloud.conf): its own user
// (OtherUsername, OtherPassword) and application credential
// (OtherApplicationCredentialID), one server, network, subnet and router
// of its own, IDs from 00900001-… on, and the shared external network by
// the same ID. Token requests naming its credentials, and requests with
// its tokens, go to it: Nova lists only its server and a GET of one of
// this project's is 404 itemNotFound.
//
// # Endpoints
//
//	GET    /compute/v2.1/servers[/detail]        the token's project's; name= and ip= are regexes
//	                                             (matched anywhere), status=, availability_zone=,
//	                                             flavor=, tags…=; newest first; limit/marker,
//	                                             servers_links; all_tenants 403
//	GET    /compute/v2.1/servers/{id}            404 itemNotFound (also another project's);
//	                                             shaped per microversion (see below)
//	DELETE /compute/v2.1/servers/{id}            204, a task (deleting), then gone
//	POST   /compute/v2.1/servers/{id}/action     os-stop / os-start, 202, a task (powering-off/-on;
//	                                             409 in the wrong state or during a task);
//	                                             os-resetState, migrate, … 403
//	GET    /compute/v2.1/servers/{id}/metadata, /os-interface
//	GET    /compute/v2.1/flavors[/detail]        minRam, minDisk, sort_key, sort_dir, limit/marker
//	GET    /compute/v2.1/flavors/{id}, /flavors/{id}/os-extra_specs[/{key}]
//	GET    /compute/v2.1/os-availability-zone, /limits, /os-quota-sets/{project}[/detail|/defaults],
//	       /os-keypairs, /os-server-groups
//	GET    /network/v2.0/extensions[/{alias}]    extraroute, extraroute-atomic, allowed-address-pairs,
//	                                             availability_zone, …
//	GET    /network/v2.0/availability_zones      {name, resource, state}; name=, resource=, state=
//	GET    /network/v2.0/agents[/{id}]           none a member may see (the agent extension)
//	GET|PUT|DELETE /network/v2.0/{collection}/{id}/tags[/{tag}]   networks, subnets, ports, routers,
//	                                             floatingips, security-groups
//	GET    /network/v2.0/quotas/{project}[/details], /subnetpools (empty)
//	GET    /network/v2.0/networks[/{id}], /subnets[/{id}]
//	GET    /network/v2.0/ports                   any attribute filter; fixed_ips=ip_address=…|subnet_id=…
//	POST   /network/v2.0/ports                   201
//	GET|PUT|DELETE /network/v2.0/ports/{id}      PUT 200 (allowed_address_pairs, security_groups, …)
//	GET    /network/v2.0/routers[/{id}]
//	PUT    /network/v2.0/routers/{id}            200; routes replace the list
//	PUT    /network/v2.0/routers/{id}/add_extraroutes, /remove_extraroutes   200
//	GET|POST /network/v2.0/floatingips; GET|PUT|DELETE /floatingips/{id}
//	GET|POST /network/v2.0/security-groups; GET|PUT|DELETE /security-groups/{id}
//	GET|POST /network/v2.0/security-group-rules; GET|DELETE /security-group-rules/{id}
//	GET|POST /load-balancer/v2.0/lbaas/loadbalancers      POST 201 PENDING_CREATE, fully populated trees too
//	GET|PUT|DELETE …/loadbalancers/{id}                    PUT 200; DELETE 204, ?cascade=true
//	GET    …/loadbalancers/{id}/status                     the status tree
//	GET    …/loadbalancers/{id}/stats, …/listeners/{id}/stats   statistics, all 0
//	GET|POST …/listeners; GET|PUT|DELETE …/listeners/{id}
//	GET|POST …/pools; GET|PUT|DELETE …/pools/{id}
//	GET|POST|PUT …/pools/{id}/members                      PUT: batch replace, 202
//	GET|PUT|DELETE …/pools/{id}/members/{mid}
//	GET|POST …/healthmonitors; GET|PUT|DELETE …/healthmonitors/{id}
//	GET    …/providers, …/flavors, …/availabilityzones
//	GET    …/quotas, …/quotas/{project_id}[/default]    the project's own (see below)
//	GET    /image/v2/images                      visibility, name, property and "in:" filters;
//	                                             sort_key/sort_dir or sort; limit/marker with
//	                                             Glance's relative next link
//	GET    /image/v2/images/{id}[/file], /image/v2/schemas/image[s]
//
// Cinder, under /volume/v3/{project} (Stats names them so, e.g. "POST
// /volume/v3/{project}/volumes"), and Nova's volume attachments:
//
//	POST   /volume/v3/{project}/volumes           202 "creating"; size, name, description, metadata,
//	                                              availability_zone, volume_type, snapshot_id,
//	                                              source_volid, imageRef
//	GET    …/volumes[/detail]                     newest first; name=, status=, metadata=, bootable=,
//	                                              availability_zone=, size=; sort; limit/marker/offset,
//	                                              volumes_links; with_count (3.45)
//	GET|PUT|DELETE …/volumes/{id}                 PUT 200 (name, description, metadata); DELETE 202
//	                                              (?cascade=true), "deleting"
//	POST   …/volumes/{id}/action                  os-extend 202 "extending"; os-set_bootable 200;
//	                                              os-update_readonly_flag 202; admin actions
//	                                              (os-reset_status, os-force_delete, …) 403
//	GET|POST|PUT …/volumes/{id}/metadata
//	POST   …/snapshots                            202 "creating"; volume_id, force, name, description
//	GET    …/snapshots[/detail]                   name=, status=, volume_id=, metadata=; paged as volumes
//	GET|PUT|DELETE …/snapshots/{id}               DELETE 202 "deleting"
//	GET    …/types[/{id}]                         {id}: an ID or "default"; no extra specs (admin's)
//	GET    …/os-availability-zone, …/limits, …/os-quota-sets/{project}[/defaults] (?usage=true)
//	GET    /compute/v2.1/servers/{id}/os-volume_attachments[/{volume}]
//	POST   /compute/v2.1/servers/{id}/os-volume_attachments   200 with the device (/dev/vdb, …)
//	PUT    /compute/v2.1/servers/{id}/os-volume_attachments/{volume}   delete_on_termination (2.85)
//	DELETE /compute/v2.1/servers/{id}/os-volume_attachments/{volume}   202
//
// and, outside the API (no auth, no faults, not logged):
//
//	GET /_sim/stats       requests per operation, writes, latency
//	GET /_sim/state       a Snapshot of everything the cloud holds
//	GET /_sim/cloud.conf  CloudConfig for the URL it is fetched from
//	GET /_sim/metadata/<server ID>/openstack[/<version>[/meta_data.json]]
//	                      the server's OpenStack metadata service (see below)
//
// Octavia's resources answer under /v2.0 and /v2, with or without the
// lbaas segment, as Octavia's V2 controller serves them.
//
// # Behaviour
//
// The users are project members (roles member, reader,
// load-balancer_member) and each service answers as its default policy
// does for one: Nova's admin-only calls (os-hypervisors, os-services,
// os-aggregates, flavor create/update/delete, flavor access, extra spec
// changes, the detailed zone list, all_tenants, admin server actions, …)
// are 403 "Policy doesn't allow <rule> to be performed.", not 404, so
// clients fall back as they do on a real cloud; admin-only attributes
// (OS-EXT-SRV-ATTR:*, host_status, a port's binding:host_id) are not
// shown.
//
// Nova honours X-OpenStack-Nova-API-Version and OpenStack-API-Version
// ("compute 2.x" or "latest"; 400 unparsable, 406 out of range), echoes
// the version it served in both headers, and shapes bodies as Nova does
// at that version: the server's flavor is a link before 2.47 and embedded
// (with extra_specs) from it; locked (2.9), description (2.19), tags
// (2.26), trusted_image_certificates (2.63), server_groups (2.71, show
// only), locked_reason (2.73), OS-EXT-SRV-ATTR:hostname (2.90) and
// pinned_availability_zone (2.96); flavors get description at 2.55,
// extra_specs at 2.61 and swap 0 instead of "" at 2.75. Servers boot
// from Glance images (Images, AddImage); flavors are Flavors plus
// AddFlavor's.
//
// Success codes are the real services': creates 201 (Nova actions 202),
// Neutron and Octavia updates 200, deletes 204, Octavia member batch 202.
// Errors carry each service's body: Nova {"itemNotFound":{"code","message"}},
// Neutron {"NeutronError":{"type","message","detail"}}, Octavia
// {"faultcode","faultstring","debuginfo"}, Keystone {"error":{…}}.
// Neutron rejects filters on unknown attributes (400), as its
// filter-validation extension does.
//
// Pagination: Nova caps pages at Options.MaxLimit and gives a full page a
// next link even when nothing follows (so clients read an empty last
// page); Neutron returns everything unless asked for a limit; both links
// are absolute and keep the request's filters. Octavia pages by its own
// PaginationHelper's rules (see octavia_pages.go): a limit capped at
// MaxLimit (below 1: none), a next link on every full page
// (len >= limit), a previous link when the request had a marker,
// page_reverse, links carrying limit, sort, sort_key and the marker only,
// and <plural>_links always there.
//
// Every answer carries x-openstack-request-id (Nova's also
// x-compute-request-id), "req-" and a random UUID, as oslo.middleware's
// RequestId filter and Glance set it, except the version roots of Nova
// and Neutron, which run without it (see requestid.go).
//
// Octavia is asynchronous: every change to a load balancer or a child
// puts the load balancer in PENDING_CREATE/UPDATE/DELETE (and the child in
// PENDING_*); the Options.ProvisioningReads-th read of the load balancer
// (GET, status tree, or a list page holding it) shows it settled: ACTIVE,
// ERROR when FailProvisioning matches it, or gone (404) after a delete.
// So do Nova's server tasks (os-stop, os-start, delete: see
// nova_tasks.go), on reads of the server. Advance settles everything at
// once, and with Common.SettleAfter (cmd/cloudsim's --settle-after) a
// pending load balancer or task also settles that long after it started,
// read or not, as the real services move on; tests leave it 0 and need no
// sleep. While a tree is not ACTIVE, any
// change to it is 409 "Load Balancer <id> is immutable and cannot be
// updated." (a load balancer in ERROR may only be deleted). Deleting one
// with children needs ?cascade=true (400 otherwise). The VIP is allocated
// at create time as a Neutron port (device_owner Octavia, name
// octavia-lb-<id>) that floating IPs can be associated with; it goes with
// the load balancer. Validation follows Octavia: listener/pool protocol
// pairs (TCP takes HTTP, HTTPS, PROXY, PROXYV2, TCP pools; UDP only UDP;
// …), one default pool per listener, one monitor per pool, UDP-CONNECT
// only on UDP/SCTP pools, one listener per port and transport,
// allowed_cidrs of the VIP's IP version, the amphora provider refusing
// SOURCE_IP_PORT and OVN anything else (501).
//
// Neutron: floating IPs need a router between the port's subnet and the
// external network (404 ExternalGatewayForFloatingIPNotFound otherwise)
// and one per fixed IP (409); router routes need a next hop on a subnet
// the router is on, not one of its own addresses (400 InvalidRoutes), and
// at most Options.MaxRoutes of them (400 RoutesExhausted). Security groups
// come with Neutron's two egress rules; a rule equal to an existing one
// is 409 SecurityGroupRuleExists (no remote prefix and 0.0.0.0/0 or ::/0
// being the same), a group still on a port cannot be deleted (409
// SecurityGroupInUse), and a port without port security or addresses
// cannot take groups (400 PortSecurityAndIPRequiredForSecurityGroups).
// Ports filter on security_groups (port-security-groups-filtering).
//
// IDs are deterministic UUIDs from counters, so tests and scenarios
// repeat; tokens are random. Timestamps are fixed, except a load
// balancer's updated_at, which moves on by one second at each change of
// its provisioning status (a change to it or a child, settling), as
// Octavia's does. A member whose server was deleted is still that
// server's in Cloud().LoadBalancers.
//
// # Block storage
//
// Cinder answers as Cinder 2022.2 (Zed) does a project member, from its
// controllers, views and cinder/volume/api.py checks, with their
// messages: creates check the type (404 "Volume type with name … could
// not be found."), the snapshot or source volume (404; available, or
// available or in-use for a source: 400), the size (a positive integer,
// at least the snapshot's or source's; defaulting to it), the zone (400
// "Availability zone '…' is invalid."; by default the source's, else
// the first of Options.VolumeZones: "nova" and every server's zone), the
// multiattach parameter Cinder removed (400: multiattach comes from the
// volume type's "multiattach": "<is> True" extra spec, as the default
// type "multiattach" has) and the quotas (413 overLimit with
// Retry-After: 0; Options.VolumeQuotas, higher than Cinder's defaults).
// A volume is deleted only when available, error or error_extending,
// unattached and without snapshots (400 "Invalid volume: Volume status
// must be available or error … have snapshots, …"); extended only
// upwards (400) and only when available, or in-use from 3.42; snapshots
// are of available volumes, of in-use ones with force=true (or any from
// 3.66, where force=false is 400). A member sees
// os-vol-tenant-attr:tenant_id and the snapshots' extended attributes
// but not the host or migration attributes, and an attachment's
// host_name as null. Lists are Cinder's: newest first, a next link on
// every full page, an unknown marker 404, from 3.31 an unknown filter
// 400 (all_tenants ignored), before it dropped. Fields follow the
// microversion (group_id 3.13, shared_targets and service_uuid 3.48,
// volume_type_id 3.63, consumes_quota 3.65; a snapshot's
// group_snapshot_id 3.14, user_id 3.41). A {project} other than the
// token's is 400 "Malformed request url".
//
// Volumes are asynchronous (cinder_volume_api.go): "creating",
// "extending", "deleting", "reserved" while Nova attaches (Cinder's
// attachments flow shows no "attaching"), "detaching", and snapshots
// "creating" and "deleting", settle as load balancers do: on the
// Options.ProvisioningReads-th read (GET of the volume or snapshot, a
// list page holding it, Nova's attachment GET or list), on Advance, or
// Common.SettleAfter after they started; a negative ProvisioningReads
// settles them at once (what csi-sanity wants). Nova's POST
// os-volume_attachments answers at once with the device it reserved
// (/dev/vdb on, vda being the root disk; a device asked for is ignored,
// as the libvirt driver does) and lists the attachment; Cinder shows it
// in the volume's attachments once attached. Nova refuses a volume not
// found (404), one attached to the server (400 "volume … already
// attached") or elsewhere when not multiattach (400 "… is already
// attached to instances: …"), one Cinder cannot reserve (400, Cinder's
// message passed on), a multiattach volume before 2.60 (400), a server
// not active, paused or stopped or with a task (409 "Cannot
// 'attach_volume' instance … while it is in …"), and a disk beyond
// Options.MaxDiskDevices (403 TooManyDiskDevices; 26, the root disk
// included); a detach of a volume not in-use is 400, of one not attached
// 404 "Instance … is not attached to volume …". The attachment view
// follows the microversion: id until 2.88, attachment_id and bdm_uuid
// from 2.89, tag from 2.70 (settable from 2.49), delete_on_termination
// from 2.79; servers list their volumes in
// os-extended-volumes:volumes_attached. Deleting a server detaches its
// volumes and deletes those attached with delete_on_termination.
//
// Options.Hypervisor (simkit.Hypervisor; nil: records only) is called
// with the state lock held when a task settles: Create when a volume is
// made (with the snapshot ID when from a snapshot; a clone is Snapshot
// of the source, Create from it, DeleteSnapshot), Attach and Detach when
// Nova's attach or detach completes, Resize when an extend does (on the
// server it is attached to, if any), Snapshot when a snapshot is made,
// DeleteSnapshot and Delete when they go; AddVolume calls Create and
// Attach at once. Disks are simkit.Disk{ID, ByIDName "virtio-" and the
// volume ID's first 20 characters (the virtio serial Nova sets, cut by
// virtio-blk, under /dev/disk/by-id; see ByIDName), SizeBytes size<<30,
// Server the server ID or ""}. A failing call leaves what the cloud
// leaves after a failed driver call: a create error, a delete
// error_deleting, an extend error_extending at the old size, a snapshot
// error (error_deleting when deleting), an attach undone (the volume as
// it was, no attachment), a detach rolled back (in-use). SetVolumeStatus
// is the admin's os-reset_status for tests.
//
// The metadata service of each server is at /_sim/metadata/<server
// ID>/openstack/…, what the server sees at
// http://169.254.169.254/openstack/…: the versions (2012-08-10 …
// 2020-10-14, latest, one a line), each version's documents, and
// meta_data.json with uuid, name, hostname (<sanitized name>.novalocal),
// launch_index, availability_zone, meta, random_seed, project_id and
// devices (the tagged volume attachments) as the version has them, and
// network_data.json; no token. MetadataHandler(serverID) serves the same
// at the root of a listener of its own (a stand-in for 169.254.169.254);
// WriteConfigDrive writes the same documents as a config drive's tree
// (openstack/<version>/meta_data.json).
//
// Not simulated: Cinder's attachments API (/attachments) and the old
// attach flow's volume actions (os-attach, os-reserve,
// os-initialize_connection, …: 400 "There is no such action"), retype,
// backups, groups, transfers, volume type management (403), image-backed
// volumes beyond bootable and volume_image_metadata, and the swap of a
// volume attachment (403, an admin's and Cinder's).
//
// Faults: Inject (per operation, a prefix with "*", or a method; counted;
// at a seeded Rate), Fail, RateLimit (429 with Retry-After), ResetConnections,
// SetLatency and Options.Latency, FailProvisioning for Octavia. Stats
// counts requests per operation (e.g. "GET /compute/v2.1/servers/detail"),
// Writes the successful mutations, Requests is the request log. The
// machinery is framework/frameworktest/simkit.
//
// Octavia's quotas are a project member's view of them (default policy):
// its own project's quota with Octavia's defaults (-1) filled in, the
// quota list holding the project's record (limits null) once it has
// created a load balancer, the defaults at /quotas/{project_id}/default;
// another project's quota, quota changes and /quotas/defaults (which the
// api-ref lists but Octavia routes as the quota of a project called
// "defaults") are 403 (see octavia_quotas.go).
//
// # Fidelity
//
// hack/fidelity/openstack.sh (make fidelity) drives cmd/cloudsim's
// examples/cloudsim/openstack.yaml with Debian bookworm's
// python3-openstackclient 6.0.0-4 (OpenStack client 6.0.0, openstacksdk
// 0.101.0, keystoneauth1 5.0.0) and python3-octaviaclient 3.1.0-2,
// unchanged, through the OS_* variables cloudsim prints: token issue,
// also as the scenario's other user (another project: no servers) and
// with its application credential (v3applicationcredential);
// server list/show; flavor, image, network, subnet, port, router,
// security group and floating ip list; availability zone list --compute
// and --network; quota show; loadbalancer list, quota show and quota
// list; server stop and start (waiting for SHUTOFF, ACTIVE); security
// group create, rule create/list/delete, group delete; floating ip
// create/delete; port create/delete; loadbalancer create --wait, show,
// stats show, listener create --wait, listener stats show, pool, member
// and healthmonitor create --wait, member list, status show, delete
// --cascade --wait; availability zone list --volume, volume type list,
// volume create, show, list, set --size, server add volume, server show
// (volumes_attached), volume snapshot create --force, show, list, volume
// create --snapshot, server remove volume, a volume delete refused while
// a snapshot exists, volume snapshot delete, volume delete (the client's
// default volume API version, 3.0; its openstacksdk negotiates Nova's
// and finds Cinder from the version document). All 81 commands pass
// (polls included), answers checked. Before the availability zones,
// Octavia statistics and quotas were served, the network zone list was
// empty and stats and quota list answered 404.
//
// By hand, not in make fidelity (its module needs a build of its own):
// cloud-provider-openstack's cinder-csi-plugin (c453fb7c9, built from
// its source with its go.mod), unchanged, in controller mode
// (--provide-node-service=false) on cloudsim's cloud.conf
// (/_sim/cloud.conf) with --settle-after=1s and provisioningReads 1000
// (changes settle with time only), ran one lifecycle driven over its
// socket: CreateVolume, ControllerPublishVolume (its first try fails, as
// on a real cloud: it attaches while the volume is still creating, and
// Nova answers 400), ControllerUnpublishVolume, DeleteVolume, each
// succeeding; 20 API calls besides Keystone's (11 volume GETs, 3 server
// GETs, 2 attachment POSTs). openstack-csi-driver, the same way: 15
// (10 volume GETs from four 1-second retries).
//
// Cloud returns the server as a simkit.Cloud (frameworktest.SimCloud makes
// it the conformance suite's), StartCloud starts one. Scenarios:
// LoadScenario and NewFromScenario seed a server from YAML (see Scenario),
// the hook cmd/cloudsim uses.
package openstacksim

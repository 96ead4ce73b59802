// Package gbsim is a simulated Brightbox Cloud API 1.0 with its OAuth2
// token endpoint: the subset a cloud-controller-manager uses, close enough
// that the real gobrightbox client (v2.2.2) talks to it unchanged over
// real HTTP. State lives in memory; tests never need credentials or the
// internet.
//
//	s := gbsim.NewServer(t, gbsim.Options{})
//	c, _ := brightbox.Connect(ctx, &clientcredentials.Config{
//		ID: s.ClientID(), Secret: s.ClientSecret(),
//		Config: endpoint.Config{BaseURL: s.URL(), Account: s.Account()},
//	})
//
// # Authentication
//
// POST /token/ (and /token, as k8ssdk writes it) is an OAuth2 token
// endpoint (simkit.OAuth2): grant_type client_credentials for the API
// client (Options.ClientID, cli-xxxxx), password for a user
// (Options.Username) through an OAuth application (Options.AppID, by
// default k8ssdk's app-dkmch), and refresh_token. Clients authenticate
// with HTTP Basic or client_id/client_secret in the form; a scope, when
// asked for, is infrastructure and/or orbit (else invalid_scope). Answers
// are JSON with expires_in (Options.TokenTTL); errors are {"error",
// "error_description"}. Every API request needs "Authorization: Bearer";
// an unknown or expired token (ExpireTokens) gets 401 with
// {"error":"invalid_token"} and a WWW-Authenticate challenge, and the
// client must fetch a new token. account_id (which gobrightbox adds to
// every request) must be the account's, else 403; without it the
// credentials' account is used.
//
// An account has as many API clients and users as it likes
// (Options.Clients and Users, a scenario's clients: and users:,
// AddClient and SetUser): each logs in to the same account.
//
// OtherAccountServer serves a second account on the same URL, as
// Brightbox serves every account on one endpoint: OtherAccountID, with an
// API client of its own (OtherClientID) and one server; token requests by
// that client and requests with the tokens it was issued are the other
// account's, which sees none of this account's resources (404), as this
// account sees none of its.
//
// # Endpoints
//
// Lists are bare JSON arrays (no envelope, no pagination, no filters);
// everything else answers with the resource's document, shaped as
// gobrightbox's testdata (embedded objects in their short form, unset
// strings null):
//
//	GET    /1.0/accounts[/{id}]                the one account
//	GET    /1.0/zones[/{id}]                   gb1-a, gb1-b (ID or handle)
//	GET    /1.0/server_types[/{id}]            2gb.ssd, 4gb.ssd, 8gb.ssd, 4gb.nbs, 1gb.ssd (ID or handle)
//	GET    /1.0/servers[/{id}]                 zone, server_type, interfaces, cloud_ips, server_groups
//	PUT    /1.0/servers/{id}/lock_resource     and unlock_resource
//	GET    /1.0/interfaces/{id}
//	GET    /1.0/load_balancers[/{id}]          a read counts towards settling
//	POST   /1.0/load_balancers                 202, status creating; 403 beyond the account's limit
//	PUT    /1.0/load_balancers/{id}            202; absent fields are kept
//	DELETE /1.0/load_balancers/{id}            202 with the LB, status deleting; 409 when locked or gone
//	POST   /1.0/load_balancers/{id}/add_nodes        bare array [{"node"}] or {"nodes":[…]}
//	POST   /1.0/load_balancers/{id}/remove_nodes     likewise
//	POST   /1.0/load_balancers/{id}/add_listeners    bare array of listeners or {"listeners":[…]}
//	POST   /1.0/load_balancers/{id}/remove_listeners matched by "in"
//	PUT    /1.0/load_balancers/{id}/lock_resource    and unlock_resource
//	GET    /1.0/cloud_ips[/{id}]
//	POST   /1.0/cloud_ips                      201, unmapped; name, reverse_dns, mode, port_translators; 403 beyond the limit
//	PUT    /1.0/cloud_ips/{id}
//	DELETE /1.0/cloud_ips/{id}                 202 with the cloud IP; 409 while mapped
//	POST   /1.0/cloud_ips/{id}/map             {"destination": srv-|int-|lba-|grp-}; 409 when mapped
//	POST   /1.0/cloud_ips/{id}/unmap           409 when not mapped
//	GET    /1.0/server_groups[/{id}]
//	POST   /1.0/server_groups                  201; name, description
//	PUT    /1.0/server_groups/{id}
//	DELETE /1.0/server_groups/{id}             409 for the default group
//	POST   /1.0/server_groups/{id}/add_servers     {"servers":[{"server"}]}; 409 for a member
//	POST   /1.0/server_groups/{id}/remove_servers  409 for a non-member
//	POST   /1.0/server_groups/{id}/move_servers    + "destination"; answers with the destination
//	GET    /1.0/firewall_policies[/{id}]       with the rules embedded
//	POST   /1.0/firewall_policies              201; name, description, server_group
//	PUT    /1.0/firewall_policies/{id}
//	DELETE /1.0/firewall_policies/{id}         its rules go too; 409 for the default policy
//	POST   /1.0/firewall_policies/{id}/apply_to    {"server_group"}; 409 when either is taken
//	POST   /1.0/firewall_policies/{id}/remove      {"server_group"}; 409 when not applied there
//	GET    /1.0/firewall_rules[/{id}]
//	POST   /1.0/firewall_rules                 201; firewall_policy required; source or destination
//	PUT    /1.0/firewall_rules/{id}            202
//	DELETE /1.0/firewall_rules/{id}            202 with the rule
//	GET    /1.0/volumes[/{id}]                 a read counts towards settling
//	POST   /1.0/volumes                        202, creating; 422 for a value the API refuses; 403 beyond the block storage
//	PUT    /1.0/volumes/{id}                   202; name, description, serial (detached only), delete_with_server
//	DELETE /1.0/volumes/{id}                   202, deleting; 409 while attached, locked, being created or gone
//	POST   /1.0/volumes/{id}/attach            {"server","boot"}; 202, attached after the provisioning reads
//	POST   /1.0/volumes/{id}/detach            202, detached after the provisioning reads
//	POST   /1.0/volumes/{id}/resize            {"from","to"} in MiB; 202 at the new size; 409 for a stale from
//	PUT    /1.0/volumes/{id}/lock_resource     and unlock_resource
//	GET    /_sim/metadata/{server}/latest/meta-data/...  the server's metadata service (MetadataHandler)
//	GET    /_sim/state, /_sim/stats            what the cloud holds, what it served
//
// Both sides of a relation are always in step: a cloud IP mapped to a load
// balancer is in the LB's cloud_ips and has it as load_balancer (mapped to
// a server: in the server's cloud_ips, with interface and server); a
// server in a group lists it in server_groups; a policy applied to a
// group is the group's firewall_policy.
//
// # Validation and errors
//
// Every enumeration is as strict as gobrightbox's (LoadBalancerStatuses,
// BalancingPolicies, ListenerProtocols, HealthcheckTypes, ProxyProtocols,
// CloudIPModes, TransportProtocols…): a request with any other value, ""
// included, gets 422, and the simulator never answers with one unless
// CorruptStatus asks it to. Errors carry {"error_name", "errors":[…]}
// (brightbox.APIError): 400 bad_request for a body that does not decode,
// 403 Forbidden for another account or a create beyond the account's
// limits (Options.CloudIPsLimit, LoadBalancersLimit), 404
// missing_resource, 409 invalid_state for a state that refuses the
// request (mapped, locked, being deleted, already a member), 422
// invalid_arguments for values the API does not accept. missing_resource
// and Forbidden are the names cloud-apis.md and gobrightbox's testdata
// give; the others are plausible, and clients look at the status.
//
// # Asynchronous resources
//
// What is pending settles on reads (simkit.Lifecycle), at once on Advance
// and, with Options.SettleAfter (cmd/cloudsim's --settle-after, 2s by
// default; a scenario's settleAfter), that long after it started whether
// or not anyone reads it, as the real API moves on with time; tests leave
// SettleAfter 0 and need no sleep. A server seeded creating is active from
// its Options.ProvisioningReads-th read. A new load balancer is creating
// until its Options.ProvisioningReads-th read (a GET of it, or a list),
// then active; a deleted one is deleting until as many reads, then
// deleted, its cloud IPs unmapped (so they can be destroyed: the existing
// CCM destroys its cloud IP right after the load balancer, and reads the
// cloud IP, not the load balancer, while it retries), and stays listed
// for Options.DeletedReads more lists (a deleted server too) or until its
// time is up. ACME domains are pending until as many reads of the load
// balancer once a cloud IP is mapped to it (Let's Encrypt reaches it
// through one: without one they stay pending, Advance and time included),
// then valid with a certificate issued. A cloud IP mapped onto a load
// balancer shows as mapped after Options.MappingReads reads (0: at once).
// A volume, an attach and a detach settle likewise (see Volumes).
// Advance settles everything pending; PurgeDeleted drops what is deleted.
//
// gobrightbox keeps a token until its expires_in has passed (less x/oauth2's
// ten seconds): after ExpireTokens it gets 401 until its client fetches a
// new token, which is the caller's to do.
//
// # For tests
//
// AddServer, AddLoadBalancer, AddCloudIP, AddServerGroup,
// AddFirewallPolicy and AddVolume seed the cloud (what the existing CCM,
// or someone, would have made); DeleteServer, SetServerStatus,
// SetLoadBalancerStatus, SetACMEDomainStatus and SetVolumeStatus change it;
// Servers, LoadBalancers, CloudIPs, ServerGroups, FirewallPolicies,
// FirewallRules, Volumes and State read it. Options.Hypervisor is told
// what happens to volumes' blocks (framework/csi/csitest's loop devices).
// Env and UserEnv are the provider's environment (API client or user);
// ExpireTokens, SetClientSecret, SetUser and TokenRequests cover the
// credentials;
// Base brings Stats (per operation), Writes, Inject, Fail, RateLimit,
// ResetConnections and SetLatency; Fault.Truncate cuts an answer's JSON
// short and CorruptStatus puts an unknown status in it. Cloud adapts the
// Server to simkit.Cloud, and Scenario seeds it from YAML for
// cmd/cloudsim.
//
// # DNS names
//
// LookupHost answers the names the API hands out, for cmd/cloudsim's DNS
// server (--dns): a cloud IP's fqdn (cip-xxxxx.gb1.brightbox.com) its
// public IPv4 and IPv6 addresses, its reverse_dns its IPv4 address; a
// server's fqdn (srv-xxxxx.gb1.brightbox.com) its private IPv4 address,
// ipv6.<fqdn> its IPv6 address, public.<fqdn> its cloud IPs'; a server
// group's fqdn those of its members. The existing CCM resolves a cloud
// IP's fqdn and reverse_dns (brightbox/domain_resolution.go) before it
// builds a load balancer, and needs one of the cloud IP's addresses among
// the answers. Which families Brightbox's DNS answers for each name is
// not documented in what this package follows: the fqdn's two and the
// reverse name's IPv4 are what the CCM's check accepts. A Go program
// built without cgo (the CCM is) reads only /etc/resolv.conf, so point it
// at cloudsim --dns=127.0.0.53:53 with a resolv.conf saying "nameserver
// 127.0.0.53" bind-mounted over /etc/resolv.conf in a mount namespace of
// its own (unshare -m); checked with the CCM's own call, net.LookupIP.
//
// # Fidelity
//
// Brightbox's command-line client is a Ruby gem (brightbox-cli, on
// fog-brightbox) that cannot be installed here (no rubygems), so gbsim is
// checked with two independent Go clients:
//
//   - gobrightbox v2.2.2, Brightbox's Go client (the version the existing
//     CCM pins), driven by hack/fidelity/brightbox through a read and
//     write workflow against cmd/cloudsim with gobrightbox's own OAuth2
//     client-credentials flow over real HTTP: `make fidelity
//     FIDELITY=brightbox` (hack/fidelity/brightbox.sh, scenario
//     hack/fidelity/brightbox.yaml, where only time settles anything). It
//     logs in with three API clients, reads the account, zones, server
//     types, servers and an interface; makes a server group with a
//     member, a firewall policy applied to it and a rule, changes and
//     removes them; creates, updates, maps to a server, unmaps and
//     destroys a cloud IP (resolving its names through CLOUDSIM_DNS when
//     cloudsim answers DNS); creates a load balancer, waits for it to be
//     active, maps a cloud IP onto it, updates it, adds and removes a
//     listener and a node, locks it, then destroys it and, without reading
//     it again, waits for the cloud IP to be unmapped and destroys it; and
//     checks the API's 404 and 409 errors. Result: all 45 checks pass
//     (49 with cloudsim --dns, which adds the name resolutions).
//   - brightbox/brightbox-cloud-controller-manager (master, commit
//     daf9121 of March 2026, on gobrightbox v2.2.2 and k8ssdk v2.1.1),
//     built from its source and configured by BRIGHTBOX_CLIENT,
//     BRIGHTBOX_CLIENT_SECRET, BRIGHTBOX_API_URL and BRIGHTBOX_ACCOUNT
//     (what Env returns). Run against cmd/cloudsim with 1,000 servers,
//     it converged, but leaked every Service's cloud IP on delete while a
//     deleting load balancer moved on only when read
//     (TestDeletingLoadBalancerSettlesWithTime), and its DNS check needed
//     a hand-made hosts file (LookupHost, cloudsim --dns).
//
// # Volumes
//
// Brightbox's network block storage, as gobrightbox v2.2.2 reaches it
// (volumes.go: Volumes, Volume, CreateVolume, UpdateVolume,
// DestroyVolume, LockVolume, UnlockVolume, AttachVolume, DetachVolume,
// ResizeVolume), with the rules of brightbox.com/docs/reference/volumes
// and of Brightbox's own clients (fog-brightbox's requests and specs,
// brightbox-cli, terraform-provider-brightbox):
//
//   - sizes are MiB (VolumeNewSize{40960, 61440} in gobrightbox's tests,
//     "The new size in MiB" in fog-brightbox): MinVolumeSize (40960, the
//     documented "minimum of 40GB") to MaxVolumeSize (4 TiB, "maximum of
//     4TB"), the minimum when none is given; they only grow, "instantly
//     at any time", attached or not (resize answers at the new size), and
//     the API checks from against the size ("The API requires the old
//     from size to avoid acting on stale data", fog-brightbox): another is
//     409. Reading 40GB and 4TB as GiB and TiB is inferred from the MiB
//     sizes Brightbox's clients use. Terraform's acceptance tests make
//     20480 MiB volumes, below the documented minimum, so the API may
//     once have taken smaller ones; gbsim follows the documentation;
//   - create answers 202 with the volume creating (fog-brightbox expects
//     202 of create, update, attach, detach, resize and destroy, 200 of
//     lock_resource), detached after Options.ProvisioningReads reads, as
//     Terraform's provider waits for; storage_type network; serial up to
//     20 characters, default the ID ("defaults to the volume id
//     (vol-xxxxx)"), changed only while detached ("The volume serial can
//     be edited, but only when a volume is detached"); filesystem_type xfs
//     or ext4 with an optional filesystem_label of up to 12 characters
//     ("Automatic formatting"), not with an image (fog, the CLI and
//     Terraform all refuse both), never changed after; image (an image
//     the simulated cloud has: UbuntuImage or BlankImage) makes
//     source_type image, none raw with BlankImage shown as the image;
//     encrypted, delete_with_server; 403 "Account limit reached" beyond
//     the account's block storage (Options.BlockStorageLimit, shown as
//     the account's block_storage_limit and _used, whose unit is not
//     documented: gbsim's is MiB);
//   - attach {server, boot} and detach answer 202 with the volume as it
//     is and are done (attached with server set, or detached) after
//     Options.ProvisioningReads reads: Terraform's provider waits for
//     attached and detached; meanwhile the same request is accepted again
//     and any other change to the volume is 409. Up to
//     Options.VolumesPerServer (the documented 6) volumes per server,
//     boot included: one more is 422. A boot volume attaches only to a
//     stopped server ("Only when server is stopped", fog-brightbox) with
//     none, and is not detached from a running one (inferred). Attaching
//     to a server that does not exist is 422, as mapping a cloud IP to
//     one is; to one not active or stopped, 409;
//   - destroy is refused (409) while the volume is attached, locked
//     (lock_resource: "locks a resource against destroy requests"),
//     being created or already going; it is deleting, then deleted after
//     the reads, and listed for Options.DeletedReads more lists, as a
//     deleted server is;
//   - a deleted server's volumes are detached, and deleted with
//     delete_with_server;
//   - a server's document lists its attached volumes (Server.Volumes).
//
// The real API's volumes have a zone (brightbox-cli shows one, fog-brightbox
// reads it), which gobrightbox v2.2.2 neither sends nor reads; gbsim keeps
// to gobrightbox's documents (every field it writes is one gobrightbox
// knows), so its volumes have none and an attach is not limited to a
// zone. Whether Brightbox limits it is not documented.
//
// There are no volume snapshots: Brightbox's API snapshots servers (an
// Image), gobrightbox v2.2.2 has no call that snapshots a volume, and a
// volume's copy (POST /1.0/volumes/{id}/copy, in fog-brightbox) is not
// in gobrightbox either; gbsim has neither. The Hypervisor's Snapshot is
// never called.
//
// With Options.Hypervisor, each volume's blocks follow its state: made
// when it is created (empty: an image's contents are not simulated),
// attached (Disk.ByIDName virtio-<serial>, ByIDName) and detached when
// that is done, grown with a resize, forgotten when it is destroyed. The
// device name is inferred, not verified: Brightbox documents that the
// serial names the volume under /dev/disk/by-id, its
// brightbox-volume-device-plugin watches /dev/disk/by-id for names
// ending in vol-xxxxx, and udev names a virtio disk virtio-<serial>.
//
// # Instance metadata
//
// Each server's metadata service ("the EC2 compatible metadata server",
// brightbox.com/docs/guides/cli/user-data) is served under
// /_sim/metadata/<server ID>/ and by MetadataHandler: instance-id,
// hostname, local-hostname, local-ipv4 and placement/availability-zone
// under latest/meta-data/. The service and its hostname and instance-id
// are documented; their values, and the other entries, are EC2's layout,
// inferred.
//
// # Not simulated
//
// Creating or destroying servers through the API, the images API (two
// images exist, for volumes), copying a volume, volume zones, database
// servers, API clients, users and collaborations; the Orbit storage API;
// rate limiting (the real API has none documented, and gobrightbox no
// handling of it).
package gbsim

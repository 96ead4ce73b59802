// Package tritonsim is a simulated Triton CloudAPI (version 9, as
// triton-go v1.8.5 and Joyent's own CLI, node-triton, speak it) with a
// view of Triton CNS and Container Monitor: the subset a
// cloud-controller-manager uses, close enough that the real triton-go
// clients and the `triton` command talk to it unchanged over real HTTP,
// signing every request (see Fidelity). State lives in memory; tests
// never need credentials or the internet.
//
//	s := tritonsim.NewServer(t, tritonsim.Options{})
//	signer, _ := authentication.NewPrivateKeySigner(authentication.PrivateKeySignerInput{
//		KeyID: s.KeyFingerprint(), PrivateKeyMaterial: s.AccountKeyPEM(), AccountName: s.Account()})
//	cc, _ := compute.NewClient(&triton.ClientConfig{TritonURL: s.URL(), AccountName: s.Account(),
//		Signers: []authentication.Signer{signer}})
//
// # Authentication
//
// Every endpoint but /--ping and /_sim/* needs an HTTP Signature
// (simkit.HTTPSignature): keyId /<account>/keys/<fingerprint> or
// /<account>/users/<user>/keys/<fingerprint>, MD5 or SHA256 fingerprint,
// rsa-sha1/256/512, ecdsa-sha256/384/512 or ed25519 as the key fits, and a
// signed Date within five minutes of the server's clock. The account key
// is RSA (AccountKey, AccountKeyPEM in PKCS #1, KeyFingerprint in MD5, as
// triton-go's PrivateKeySigner wants them), named Options.KeyName
// (account-key) in ListKeys; RotateAccountKey replaces it with a new one
// (NewAccountKey), revoking the old; AddKey adds others, for the account
// or a sub-user, CreateKey (POST /{account}/keys) and a scenario's keys
// (ScenarioKey: given, or generated RSA, ECDSA or Ed25519 keys written to
// files) more of the account's. An unknown key or a malformed header gets
// 401 InvalidCredentials, a signature that does not verify or a skewed
// Date 401 InvalidSignature, a path under another account 403
// NotAuthorized. The path's account "my" is the signer's own (a sub-user's
// account's), as CloudAPI's loadAccount reads it: /my/machines is
// /<login>/machines for whoever signs.
//
// OtherAccountServer serves a second account on the same URL, as CloudAPI
// serves every account of the datacenter: OtherAccountLogin, with a key
// of its own and one machine; requests whose keyId names it are its, and
// it sees none of this account's machines (404 under its path), as this
// account sees none of its.
//
// # Endpoints
//
// Bodies are JSON, shaped as triton-go's types decode them; errors are
// {"code", "message"}:
//
//	GET    /--ping                              unauthenticated; Triton-Datacenter-Name header
//	GET    /{account}                           id (UUID), login, triton_cns_enabled...; "my" for {account}
//	                                            everywhere is the caller's own
//	GET    /{account}/limits                    Options.Limits with their use ([] for none: the plugin off)
//	GET|POST /{account}/keys, GET|DELETE /{account}/keys/{name or fingerprint}
//	                                            {name, fingerprint (MD5), key (OpenSSH)}
//	GET    /{account}/machines                  offset/limit (≤1000, default 1000); name, state, brand, image,
//	                                            memory, type and tag.<key>=<value> filters (all must match);
//	                                            X-Resource-Count; deleted machines only with tombstone=true
//	HEAD   /{account}/machines                  X-Resource-Count, no body
//	POST   /{account}/machines                  201, provisioning; name, package, image, networks, tag.*,
//	                                            metadata.*, firewall_enabled (locality, affinity ignored);
//	                                            403 NotAuthorized "Quota exceeded" over a limit
//	GET    /{account}/machines/{id}             200; 410 Gone with the machine (state deleted), then 404
//	POST   /{account}/machines/{id}?action=     start, stop, reboot, rename (name), resize (package),
//	                                            enable_firewall, disable_firewall,
//	                                            (en|dis)able_deletion_protection: 202; the action and its
//	                                            parameters in the query (triton-go) or a JSON body
//	                                            (node-triton), the query's first, as restify's req.params
//	GET    /{account}/machines/{id}/audit       the finished actions, newest first: {action, success "yes",
//	                                            time (ms), caller {type signature, ip, keyId}}; a deleted
//	                                            machine's too, until purged
//	DELETE /{account}/machines/{id}             204; 409 CannotDestroyMachine under deletion protection
//	GET    /{account}/machines/{id}/nics[/{mac}]
//	GET|POST|PUT|DELETE /{account}/machines/{id}/tags     POST merges, PUT replaces; answers the tags
//	GET|DELETE          /{account}/machines/{id}/tags/{key}
//	GET|POST|DELETE     /{account}/machines/{id}/metadata POST merges (string values)
//	GET|DELETE          /{account}/machines/{id}/metadata/{key}
//	GET    /{account}/machines/{id}/fwrules     the rules that target the machine
//	GET    /{account}/networks[/{id}]           the public network and the default fabric
//	GET    /{account}/fabrics/default/vlans[/{vlan}[/networks]]
//	GET    /{account}/packages[/{id or name}]   g4-highcpu-1G, -2G, -4G, g4-general-8G
//	GET    /{account}/images[/{id}]             base-64-lts and cloud-load-balancer (active only by default)
//	GET    /{account}/datacenters               {name: url}; .../{name} is a 302 to it
//	GET    /{account}/services                  cloudapi, and cmon: CMONURL once started
//	GET|POST /{account}/fwrules, GET|POST(update)|DELETE /{account}/fwrules/{id}
//	                                            {id, rule, enabled, log, global if true, description if set};
//	                                            a global rule cannot be updated
//	POST   /{account}/fwrules/{id}/enable|disable
//	GET    /{account}/fwrules/{id}/machines
//	GET    /{account}/volumesizes               [{size (MiB), type}] ascending: Options.VolumeSizes
//	GET    /{account}/volumes                   name (exact, or *-prefixed/suffixed), size, state, type
//	                                            filters (all must match); failed volumes only with state;
//	                                            X-Resource-Count; predicate refused (409), not simulated
//	POST   /{account}/volumes                   201, creating; name, size, networks, type (tritonnfs,
//	                                            required), tags, affinity (ignored)
//	GET    /{account}/volumes/{id}              {id, name, owner_uuid, type, size, state, networks, refs,
//	                                            tags, filesystem_path, created}
//	POST   /{account}/volumes/{id}              rename (name): 200 with the volume
//	DELETE /{account}/volumes/{id}              204, deleting, then gone: 404 VolumeNotFound
//	GET    /_sim/cns?name=<fqdn>                what a CNS name resolves to (A records, SRV, machines)
//	GET    /_sim/state, /_sim/stats             what the cloud holds, what it served
//
// # Volumes
//
// RFD 26 shared volumes, as CloudAPI serves them from VOLAPI
// (sdc-cloudapi lib/endpoints/volumes.js and lib/validation/volumes.js,
// sdc-volapi lib/endpoints/volumes.js, lib/errors.js and
// volapi-updater.js): NFS servers, each in a storage VM of its own that
// CloudAPI hides, of type tritonnfs. A create takes a size in MiB among
// the sizes ListVolumeSizes gives (the sdc_volume_nfs_* packages: 10 to
// 100 GiB by 10, 200 to 1000 GiB by 100; the smallest, 10240, when none is
// given), else 409 VolumeSizeNotAvailable naming them; fabric networks of
// the account, else 409 InvalidArgument "Invalid networks: ..."; none
// means the account's default fabric network. A name (/^[a-z0-9][\w.-]+$/i,
// at most 256 characters; generated when absent) a creating or ready
// volume has is 409 VolumeAlreadyExists. CloudAPI's own validation
// answers 409 InvalidArgument with its messages joined as JavaScript
// joins Errors ("Error: Invalid volume size: 0"); VOLAPI's errors keep
// their code and status, their message after CloudAPI's "Error when
// creating volume: ". A volume is creating, without filesystem_path,
// until it settles ready with filesystem_path
// "<storage VM IP>:/zones/<storage VM UUID>/data" (a version 2 NFS server;
// the IP on its first network), or failed (FailNextVolumes). Its refs are
// the machines that use it: those created with volumes (CreateMachine's
// volumes, whose missing volumes are created as VMAPI's workflow creates
// them, and whose ready ones must share a network with the machine, else
// 409 VolumesNotReachable) and those AddVolumeRef adds; a machine's refs
// go when it is deleted. Delete is refused with 409 VolumeInUse while an
// active (neither failed nor deleted) machine refers to the volume, a
// rename while any does; otherwise the volume is deleting, answers 204 to
// further deletes, and goes when that settles: then GetVolume,
// DeleteVolume and UpdateVolume answer 404 VolumeNotFound ("Error when
// getting volume: Volume with uuid <id> could not be found"), as they do
// for another account's volume. An ID that is no UUID is 409
// InvalidArgument. With Options.NoVolumes (a datacenter without them,
// CloudAPI's default) the endpoints are 404 ResourceNotFound.
//
// The NFS servers are stood in for by directories: a ready volume's
// export is a directory named by its ID under NFSExportDir
// (Options.NFSExportDir, or a temporary directory the Server makes and
// Close removes); VolumeExportDir and NFSExport (which resolves a
// filesystem_path) give it, so that a test stands in for the node's
// `mount -t nfs <filesystem_path> <target>` by bind-mounting it. Its data
// goes when the volume does.
//
// # CMON
//
// Container Monitor is served on its own TLS listener (CMONURL; its
// self-signed server certificate, CMONCAPEM, names 127.0.0.1, localhost
// and cmon.<public zone>), started by Start, or by ServeCompanions for a
// program that mounts Handler itself (cmd/cloudsim), and closed with the
// Server. While it is served the services list names it and Env gives
// TRITON_CMON_URL, and with a KeyFile TRITON_CMON_CA_FILE, where
// WriteKeyFile writes CMONCAPEM (the provider's metrics controller reads
// both):
//
//	GET /v1/discover[?groups=a,b]   {"containers":[{vm_uuid, vm_alias, vm_image_uuid, vm_brand, vm_owner_uuid,
//	                                server_uuid, groups}]}: the account's running machines, with any of the
//	                                groups in their triton.cmon.groups tag when given (400 BadRequest if invalid)
//	GET /v1/gz/discover             403 Forbidden: the account is no operator
//
// It authenticates as CMON's lib/common.js does, by TLS client
// certificate, against the account's keys (those AddKey adds too): a
// certificate with the joyentCmon extended key usage (OIDJoyentCMON) must
// be within its validity period and, unless self-signed, be signed by the
// account key its issuer's CN names by MD5 fingerprint in sshpk's form
// ("MD5:" and unpadded base64, as `triton profile cmon-certgen` writes
// it; colon-separated hex is read too); any other certificate must be
// signed by its own key, an account key (expiry ignored). The subject's CN
// must be the account's login. Anything else, or no certificate, gets 401
// {"code":"Unauthorized"}.
//
// # Validation
//
// Tags take strings, numbers and booleans; of the triton.* tags VMAPI
// knows, triton.cns.services must follow CNS's grammar
// (label[:port][:key=value]...), triton.cns.disable be a boolean, and
// triton.cns.reverse_ptr, triton.cmon.groups and triton.network.public
// strings; any other triton.* key is refused ("Unrecognized special
// triton tag"), all with 409 ValidationFailed. A create naming an unknown
// image gets 404, an unknown package or network, a name in use or a
// malformed one 409 InvalidArgument, a missing image or package 409
// MissingParameter. Firewall rules are parsed (FROM ... TO ... ALLOW|BLOCK
// proto ports) and garbage, or a rule that affects no VMs (neither side
// all vms, a vm or a tag), refused with 409 InvalidArgument; a rule is
// served back as FWAPI rewrites it (sdc-fwrule's text()): targets sorted
// by kind (any, all vms, ip, subnet, tag, vm) and name, tag names and
// values quoted, ports and ICMP types sorted, keywords upper case — e.g.
// "from any to tag role allow tcp ports 80, 443" is listed as
// `FROM any TO tag "role" ALLOW tcp (PORT 80 AND PORT 443)`.
//
// # Machines and CNS
//
// A machine's NICs get addresses from their networks; primaryIp is the
// first public NIC's address, else the first NIC's. Its dns_names are its
// CNS names in each zone holding one of its NICs (the public zone
// <dc>.triton.zone for public NICs, the private <dc>.cns.joyent.com for
// the others, both configurable): <uuid>.inst.<account-uuid>.<zone>,
// <name>.inst..., and <service>.svc.<account-uuid>.<zone> for each
// triton.cns.services entry. Resolve and /_sim/cns answer as CNS does:
// nothing with the account's CNS off (but instance names of machines with
// triton.cns.reverse_ptr), nothing for a deleted or failed machine or one
// with triton.cns.disable; service names list only running machines whose
// triton.cns.status metadata is absent or "up", with SRV records for
// entries with a port.
//
// # Asynchronous state
//
// Pending work settles on reads, with time, or on Advance
// (simkit.Lifecycle). A created machine is provisioning until its
// Options.ProvisioningReads-th read (a GET, a list page holding it, or a
// read of its audit), then running; stop makes it stopping, then stopped;
// start (or reboot) of a stopped machine makes it running, and a reboot
// of a running one finishes, on as many reads. Every other action
// (rename, resize, firewall, deletion protection, tags, metadata, delete)
// changes the machine at once, and its VMAPI job finishes on as many
// reads: an action's audit record appears when it finishes, after the
// answer, as on Triton. With Options.SettleAfter (cmd/cloudsim's
// --settle-after, a scenario's settleAfter) each also settles that long
// after it started, read or not, as Triton's jobs finish on their own;
// tests leave it 0, and nothing moves on a timer. A deleted machine
// answers 410 for Options.GoneReads GETs, then 404; Purge forgets it at
// once. A created volume is creating until its ProvisioningReads-th read
// (a GET, or a list page holding it), then ready; a deleted one is
// deleting until as many reads, then gone (SettleAfter applies to both).
// Advance settles everything pending.
//
// # For tests
//
// AddMachine, AddNetwork, AddPackage, AddImage, AddFirewallRule and
// AddVolume seed the cloud; DeleteMachine, SetMachineState, SetTags,
// SetMetadata, SetCNSEnabled, SetVolumeState, FailNextVolumes,
// AddVolumeRef and RemoveVolumeRef change it; Machine, Machines,
// FirewallRules, Keys, Limits, Audit, Volume, Volumes, VolumeExportDir,
// NFSExport, State, Resolve and ResolveCNS read it; LookupHost answers a DNS
// server in front of it (CNS names, and CMON's). Env is the provider's
// environment (TRITON_URL, TRITON_ACCOUNT, TRITON_KEY_ID,
// TRITON_KEY_MATERIAL, and CMON's while it is served). Base
// brings Stats, Writes, Inject, Fail, RateLimit (429 RequestThrottled),
// ResetConnections and SetLatency. Cloud adapts the Server to
// simkit.Cloud (Moirai machines as its load balancers), and Scenario seeds
// it from YAML for cmd/cloudsim.
//
// # Not simulated
//
// Creating networks, VLANs, images or packages; NIC add and remove;
// ListVolumes' predicate, volumes' affinity and the volumes of a scenario
// file; a machine's provisioning waiting for the volumes it mounts;
// snapshots, users and roles (sub-user keys are added with
// AddKey, and /{account}/users/{user}/keys is not served); key
// attestation; account updates; a failed job (every audit record says
// success "yes"); limits on resize; locality and affinity placement; CNS's
// use_login names and the TXT records of empty services; CMON's
// per-machine /metrics, its Host header check, and certificates signed by
// a sub-user with the administrator role.
//
// # Fidelity
//
// Checked with Joyent's own CLI, node-triton 7.17.0 (npm package
// "triton"), unchanged, against cmd/cloudsim on hack/fidelity/triton.yaml
// by hack/fidelity/triton.sh (make fidelity), signing through an
// ssh-agent with the account's RSA key and the scenario's generated RSA,
// ECDSA and Ed25519 keys: triton info; account get and limits; key list,
// get, add and delete; network list and get; vlan list; package list and
// get; image list and get; datacenters; services (and CMON's URL
// answering 401 without a client certificate); instance list, get, nic
// list, ip, create --wait, stop, start, reboot, rename, resize,
// enable-firewall, disable-firewall, enable- and
// disable-deletion-protection (all --wait), delete refused under
// deletion protection, tag set/delete/replace-all --wait, metadata
// set/get/delete (one, all) --wait, audit, delete --wait, get of the
// deleted instance (InstanceDeleted); fwrule create --log, get, disable,
// enable, update, instances, instance fwrules, delete. All pass. Before
// this check the JSON-body actions, /my, keys, limits, audit and
// fwrule log were missing; the triton-go clients (its compute, network
// and account packages) are what the tests here drive.
package tritonsim

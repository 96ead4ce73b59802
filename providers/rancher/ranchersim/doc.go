// Package ranchersim is a simulated Rancher 1.x Cattle API v2-beta: the
// subset a cloud-controller-manager uses, close enough that go-rancher's
// v2 client talks to it unchanged over real HTTP. State lives in memory;
// tests never need a Rancher server.
//
//	s := ranchersim.NewServer(t, ranchersim.Options{})
//	env := s.Env(s.URL()) // CATTLE_URL, CATTLE_ACCESS_KEY, CATTLE_SECRET_KEY
//	c, _ := rancher.NewRancherClient(&rancher.ClientOpts{
//		Url: env["CATTLE_URL"], AccessKey: env["CATTLE_ACCESS_KEY"], SecretKey: env["CATTLE_SECRET_KEY"],
//	})
//
// # Authentication and bootstrap
//
// Every request needs HTTP Basic credentials of an environment API key
// (Options.AccessKey/SecretKey; AddAPIKey adds more, and a scenario's
// apiKeys; RevokeAPIKey refuses one); others get 401 {"type":"error",
// "status":401,"code":"Unauthorized","message":"Unauthorized"} with a
// Basic challenge. Every answer, errors and 401s included, carries
// X-Rancher-Version (RancherVersion) and X-API-Schemas naming <project
// URL>/schemas, the schema collection; an authenticated one also
// X-API-Account-Id, X-API-User-Id (the project), X-API-Account-Kind
// (project) and X-API-Account-Name, as Cattle's ApiRequestFilter,
// ApiRequestFilterDelegate and ApiAuthenticator send them (headers.go).
// The schemas are built in code for the types served (ids, pluralName,
// links self and collection, resourceMethods, collectionMethods,
// resourceActions, collectionFilters with their modifiers,
// resourceFields with create and update flags): go-rancher knows no
// other type ("Unknown schema type"). A schema answers under its id, its
// id in lower case, its plural and its plural in lower case, as Cattle's
// SchemaFactoryImpl registers it (/schemas/schemas, /schemas/hosts,
// /schemas/loadBalancerService...), and so does a type's collection path
// (/loadBalancerServices as /loadbalancerservices, /host/1h1 as
// /hosts/1h1). Every link, action and next-page URL is absolute, built
// from the URL the request came to.
//
// OtherEnvironment serves a second environment of the same Rancher server
// on the same URL (Cloud.OtherAccount): project OtherProject with its own
// environment API key (OtherAccessKey, OtherSecretKey) and one host of
// its own, IDs from 1h900001 on. Requests with its access key go to it:
// its lists hold none of this environment's resources, and a GET of one
// by ID is 404 Not Found, as a key scoped to another environment gets.
//
// # Endpoints
//
// Under <base>/v2-beta/projects/<project> (Options.Project, default 1a5):
//
//	GET    /schemas[/{id}]               (also /v2-beta/schemas)
//	GET    /hosts[/{id}]                 a read counts towards settling
//	PUT    /hosts/{id}                   name, labels
//	DELETE /hosts/{id}                   409 unless inactive or disconnected
//	POST   /hosts/{id}?action=           activate, deactivate, remove, update
//	GET    /hosts/{id}/ipaddresses       the host's ipAddresses link
//	GET    /ipaddresses[/{id}]
//	GET    /settings[/{id}]              lb.instance.image = Options.LBImage
//	GET    /stacks[/{id}], POST /stacks, PUT, DELETE /stacks/{id}, POST ?action=remove
//	GET    /stacks/{id}/services         the stack's services link
//	GET    /loadbalancerservices[/{id}], POST, PUT, DELETE /{id}, POST /{id}?action=
//	GET    /externalservices[/{id}],     POST, PUT, DELETE /{id}, POST /{id}?action=
//	GET    /<services>/{id}/consumedservices, /consumedbyservices   the links' both ends
//	GET    /services[/{id}]              every service; PUT, DELETE /{id}, POST /{id}?action=
//	                                     as under the service's own type (the CLI's scale)
//	GET    /volumes[/{id}], POST, PUT, DELETE /{id}, POST /{id}?action=   remove, purge, update
//	GET    /volumes/{id}/mounts, /volumes/{id}/storagepools   the volume's links
//	GET    /storagedrivers[/{id}], /storagedrivers/{id}/storagepools, /storagedrivers/{id}/volumes
//	GET    /storagepools[/{id}], /storagepools/{id}/hosts, /storagepools/{id}/volumes
//	GET    /mounts[/{id}]
//	GET    /containers, /secrets[/{id}]   none: empty lists, 404 (empty_types.go)
//	GET    /certificates[/{id}], POST, PUT, DELETE /{id}, POST /{id}?action=remove
//	GET    /_sim/state, /_sim/stats      what the cloud holds, what it served
//
// A method a type's schema does not list (a collection's
// collectionMethods, a resource's resourceMethods; a POST with ?action=
// goes to the action) answers 405, as Cattle's
// ValidationHandler.validateMethod does. Under <base>/v1-catalog, the
// catalog service Rancher proxies to (catalog.go): its version, schemas,
// and catalogs and templates, none.
//
// # Lists
//
// Collections are {"type":"collection","resourceType",...,"data":[...],
// "pagination":{"next","limit","partial"},"sort","sortLinks","filters"}.
// Filters follow Cattle's ParseCollectionAttributes (filters.go): a query
// key is split at its LAST underscore into a field and a modifier (name=x
// is eq; name_ne, name_prefix, name_like with SQL %, _, name_notlike,
// removed_null, removed_notnull, id_lt/_lte/_gt/_gte) and counts only
// when the field is one of the type's collectionFilters and the modifier
// one of that filter's (state, references and booleans: eq, ne, null,
// notnull); any other key is ignored, external_id included (the field
// "external", the modifier "id": the old CCM's stack lookup matches by
// name). All conditions on a field hold (SQL AND), and a null field
// matches only _null. filters echoes every collection filter, null or
// the request's conditions. limit (paging.go) is at most 3000, a limit of
// 0 or less is 3000 (the Rancher CLI sends -2), a limit that is not a
// number is the default, 100; pagination.next is the request's absolute
// URL with marker=m<offset>, and partial says more follow. sort=<filter>
// and order=asc|desc order a list by the field, then by ID (sort then
// holds name, order and the reverse link; sortLinks hold one link per
// filter); lists are otherwise by ID.
//
// # Errors
//
// Errors are {"id","type":"error","status","code","message","detail"}.
// An error Cattle raises with a status only takes its code and message
// from the status's line of api/messages.properties (respond.go): 404
// "Not Found" for an unknown ID (go-rancher's typed ById then returns
// (nil, nil)), path or project, 405 "Method not allowed", 409
// "Conflict", 401 "Unauthorized". A body that is not JSON is 400
// InvalidBodyContent; a field of the wrong type, 422 InvalidFormat. 422
// for a request's fields, with fieldName and gdapi's codes
// (MissingRequired, InvalidCharacters, MaxLengthExceeded, NotUnique,
// InvalidReference, InvalidOption, InvalidFormat, MinLimitExceeded,
// MaxLimitExceeded); 422 InvalidAction for an action the type does not
// have, 422 ActionNotAvailable for one the resource's state does not
// offer (its actions map lists those it does). As Cattle does, a PUT
// drops the fields the schema does not mark updatable.
//
// # Hosts
//
// A host has id 1h<n>, uuid, hostname, name, state (active, inactive,
// disconnected, reconnecting; activating and deactivating on the way;
// removing, then removed with its removed timestamp, then purged: 404),
// agentState, agentIpAddress, labels, info, physicalHostId and its
// ipAddresses link (address, kind, role: the agent IP is primary), which
// ?include=ipAddresses embeds in host lists and gets under "ipAddresses",
// item for item as the link answers (the host schema's includeableLinks
// holds it; other include names are ignored, as the API spec says). Actions
// by state: active {deactivate, update}, inactive {activate, remove,
// update}, disconnected {deactivate, remove, update}.
//
// # Stacks
//
// A stack (1st<n>) has name (1-63 of a-zA-Z0-9-, unique among stacks not
// removed: 422 NotUnique), externalId and group; it is created activating
// (201), then active; removing it removes its services.
//
// # Services
//
// loadBalancerService and externalService (1s<n>) share Cattle's state
// machine, with transitioning "yes" and transitioningMessage "In
// Progress" in the -ing states (null otherwise, as Cattle's
// getTransitionFields writes them) and actions only where the state
// offers them:
//
//	create (201)     registering -> inactive (startOnCreate: then activating -> active)
//	activate         inactive -> activating -> active
//	PUT, update,     active -> updating-active -> active,
//	  service links  inactive -> updating-inactive -> inactive
//	upgrade          active -> upgrading -> upgraded; finishupgrade -> finishing-upgrade -> active,
//	                 or rollback -> rolling-back -> active (the previous launch config back)
//	cancelupgrade    upgrading, finishing-upgrade -> canceling-upgrade -> canceled-upgrade
//	continueupgrade  canceled-upgrade -> upgrading -> upgraded
//	restart          active -> restarting -> active
//	deactivate       active -> deactivating -> inactive
//	remove, DELETE   -> removing -> removed (removed timestamp; hidden by removed_null;
//	                 services linking to it lose the link)
//
// A service offers an action when its state is one its process starts
// from in Cattle's spring-process-context.xml (serviceProcesses): e.g.
// inactive {activate, remove, update, upgrade}, active {deactivate,
// remove, update, restart, upgrade}, upgrading {remove, update,
// cancelupgrade, rollback}, upgraded {remove, finishupgrade, rollback},
// canceled-upgrade {remove, continueupgrade, rollback}, removing and
// removed none; the service-link actions are no process, and a load
// balancer offers them in every state (AbstractObjectResourceManager.
// addActions); external services have none. Actions answer 202 with the
// service.
//
// A create needs name (1-63 of a-zA-Z0-9-, unique in its stack among
// services not removed: 422 NotUnique) and stackId (MissingRequired,
// InvalidReference); a load balancer needs launchConfig and lbConfig.
// launchConfig.ports are "[ip:][public:]private[/tcp|udp]" (else 422
// InvalidFormat, field ports). Port rules need sourcePort (1-65535),
// protocol (http by default; http, tcp, https, tls, sni, udp, else
// InvalidOption), a serviceId of a live service (else InvalidReference),
// priority >= 1; certificateIds and defaultCertificateId name
// certificates not removed (else InvalidReference); a stickiness policy's
// mode is rewrite, insert or prefix. Service links name live services
// (InvalidReference). External services' externalIpAddresses must be IPs
// (InvalidFormat) and a healthCheck needs port.
//
// A PUT sets name, description, metadata, a load balancer's scale and
// lbConfig (the whole object), an external service's externalIpAddresses
// and hostname. It drops, without an error, every field the schema does
// not mark updatable, as Cattle's validation does: stackId, externalId,
// an external service's healthCheck (update false in the v2-beta dump:
// a new health check takes a new external service) and launchConfig (the
// dump marks a load balancer's updatable, but as the Rancher 1.2 API docs
// have it its ports change by upgrade; the one deliberate difference from
// the dump's flags, which schema_dump_test.go checks against go-rancher's
// docs/input/schemas.json). upgrade takes {"inServiceStrategy":
// {"launchConfig": {...}, "startFirst": true}}: the service keeps its ID,
// its launchConfig is the new one at once, its upgrade field holds the
// previous one.
//
// A load balancer's containers run on every active host when its
// launchConfig labels io.rancher.scheduler.global "true" (LabelGlobal),
// else on its first scale (default 1) active hosts, oldest first, while
// it is active, updating-active, upgrading (the previous launch config's
// ports), upgraded, finishing-upgrade, rolling-back, restarting,
// canceling-upgrade or canceled-upgrade: its
// publicEndpoints are one per such host and published port, ipAddress the
// host's agentIpAddress (each host's publicEndpoints lists those on it).
// A service's consumedservices link lists the services it links to,
// consumedbyservices those linking to it.
//
// # Certificates
//
// A certificate (1c<n>) has name (required, at most 255, unique among
// certificates not removed: NotUnique), description, cert, key and
// certChain (PEM). Cattle reads the certificate on create and on PUT:
// cert must be a PEM CERTIFICATE that parses (InvalidFormat), key the
// certificate's private key (PKCS#1, SEC 1 or PKCS#8: InvalidFormat when
// it does not parse or does not match), certChain PEM certificates;
// missing name, cert or key is MissingRequired. CN,
// subjectAlternativeNames (DNS names, then IPs), issuer (its CN),
// issuedAt, expiresAt, algorithm, keySize, serialNumber, version and
// certFingerprint come from the certificate. The dates (RFC 3339, UTC),
// the decimal serial and the colon-separated SHA-1 fingerprint are
// plausible choices: Cattle's formats are not documented. The key is
// answered to the create only (the schema's readOnCreateOnly), and
// /_sim/state leaves it out. Created activating, then active; remove and
// DELETE: removing, then removed (load balancers naming it keep the ID;
// a new reference to it is InvalidReference).
//
// # Volumes
//
// A volume (1v<n>, volume.go) is created with POST volumes {name, driver
// or storageDriverId, driverOpts, sizeMb, description, hostId, stackId}
// (go-rancher's Volume.Create); the other fields, accessMode included,
// are not creatable and are dropped, as Cattle's validation drops them.
// Cattle's checks, in its order: name required (MissingRequired), at
// most 255; a reference that names nothing is InvalidReference
// (storageDriverId, hostId, stackId); neither driver nor storageDriverId
// is 422 MissingRequired "Either driver or storageDriverId is required"
// (no fieldName); a name a live volume of the storage driver has is 422
// NotUnique (name) only when the request names the storage driver by
// storageDriverId: VolumeCreateValidationFilter checks nothing more, and
// a second volume of the same name by driver name alone is created, as
// on Rancher (a client that wants one volume per name lists by name
// first, as rancher/storage does); a sizeMb is 422 InvalidOption
// "Volume driver <driver> does not support specifying a size." unless
// the storage driver has CapabilityScheduleSize (Cattle gives it to
// local-scope drivers only: rancher-nfs and rancher-ebs refuse a size,
// rancher-ebs takes its size in driverOpts). A driver Rancher has no
// storage driver for is no error: the volume keeps that driver and no
// storageDriverId. The answer (201) is registering, with uri
// "<driver>:///<name>" and the map to the first storage pool of that
// driver's name (VolumeManager).
//
// The create process then resolves the storage driver (storageDriverId
// from the driver's name, driver from the storageDriverId) and leaves
// the volume inactive; one created with a hostId whose pool of the
// driver takes it goes on to deactivating, then detached
// (VolumeCreateUpdate). The states and the actions they offer, from
// Cattle's process definitions (an environment's key sees neither
// activate nor deactivate):
//
//	state         offers          moves on
//	registering   remove          -> inactive (or deactivating -> detached)
//	inactive      remove, update  update: updating-inactive -> inactive (or deactivating -> detached)
//	detached      remove          a container mounts it: activating -> active
//	active        update          its last mount gone: deactivating -> detached
//	removing                      -> removed (remove or DELETE of any but an active or activating volume)
//	removed       purge           purge, or the purge monitor: purging -> purged -> 404
//
// A PUT changes description, driverOpts (the whole map) and hostId; a
// new hostId runs the update process (the field's scheduleUpdate), 409
// for a volume that cannot (neither inactive nor active: a plausible
// choice). The other fields are dropped. DELETE of a volume in use
// (active, activating) is 405, as Cattle answers it; of one removing or
// removed, 202 with nothing done. A volume's mounts field lists its live
// mounts (instanceId, instanceName, path, volumeId, volumeName); links:
// self, mounts, storagePools, storageDriver, host. Cattle's purge
// monitor purges a removed volume a while later (0-10 minutes): here
// after Options.ProvisioningReads reads, on the next Advance, or
// SettleAfter later; a purged record stays (state purged) until the
// table cleanup, then 404 (the same again). Reads and Advance count, so
// a removed volume read twice is purging by then: POST ?action=purge at
// once, or let it go.
//
// Lists leave removed volumes out, as Cattle's do
// (AbstractObjectResourceManager.getDefaultCriteria with
// api.show.removed.for.seconds at -300; the Rancher 1.6 docs: "Removed
// volumes will not appear when
// listing volumes, but they continue to exist in Rancher API for a
// period of time"), unless the request says ?_removed; a GET by ID
// answers them. So do the lists of storage drivers, pools and mounts.
// (Hosts, stacks, services and certificates here list removed ones
// until they are purged.) Volume collection filters are the dump's:
// name, state, storageDriverId, hostId, stackId, uri, removed... but not
// driver, which Cattle ignores as a filter: rancher/storage lists by
// name, storageDriverId and removed_null.
//
// # Storage drivers and pools
//
// A storage driver (1sd<n>, storage.go) is what a storage stack's
// service registers: AddStorageDriver(RancherNFS()) (environment scope,
// multiHostRW, as the catalog's nfs stack registers it),
// AddStorageDriver(RancherEBS()) (environment scope, singleHostRW), or
// any StorageDriver. The API reads them (GET only; their actions are not
// offered). Cattle makes storage pools (1sp<n>) of each: one for an
// environment-scope driver, mapped to every live host (hostIds), one per
// live host for a local-scope driver, none for a custom one; a pool's
// volumeIds are the volumes mapped to it. Mounts (1m<n>) are containers'
// uses of volumes; the simulator runs no containers, so tests seed them
// with AddMount (the volume activates) and RemoveMount (the last one
// gone, it deactivates to detached).
//
// # The hosts' volume plugin
//
// StartVolumePlugin stands in for a storage driver's Docker volume
// plugin on one host, as rancher/storage runs it for rancher-nfs
// (volumeplugin.go): Docker's protocol on <SocketDir>/<driver>.sock
// (/run/docker/plugins/<driver>.sock on a host): POST /Plugin.Activate
// ({"Implements":["VolumeDriver"]}), /VolumeDriver.Create {Name, Opts},
// .Remove {Name}, .Mount and .Unmount {Name, ID}, .Path and .Get {Name},
// .List, .Capabilities ({"Capabilities":{"Scope":"global"}} for an
// environment-scope driver, else local), answered with Content-Type
// application/vnd.docker.plugins.v1.1+json, 200 and {"Err": ""}, or 500
// and {"Err": "..."} (a body that is not JSON: 400). Its volumes are
// directories on an export directory that every host's plugin shares
// (the NFS server's NFS_SERVER:MOUNT_DIR), and Mount bind-mounts the
// volume's directory (a real mount(2): root) at
// <MountRoot>/<driver>/<name>, where rancher-nfs mounts
// NFS_SERVER:MOUNT_DIR/<name>, counting
// callers by ID: the last Unmount unmounts and removes the mountpoint.
// VolumePluginOptions.NoMount skips the mount for tests without root.
//
// The plugin reads and writes the simulator's Cattle records, as
// rancher/storage does through the API (in process here, so that faults
// and request counts stay the provider's):
//
//   - Create of a name Rancher counts as created (active, activating,
//     deactivating, detached, removing, updating-*) does nothing; else it
//     makes the directory (rancher-nfs's create: options created, name,
//     onRemove) and saves the options as the Cattle volume's driverOpts
//     and its host as its hostId, which runs the update process: the
//     volume ends detached in the pool. Rancher must hold a live volume
//     of the driver under the name: otherwise Create fails with "No such
//     volume" and removes the directory (rancher/storage waits up to
//     30 s for Rancher to create one; the stand-in does not wait). A
//     volume still registering finishes its create first. driverOpts
//     host and export (or exportBase), another NFS share, are refused.
//   - Mount, Get and List see only volumes Rancher counts as created, so
//     a client calls Create before Mount, as Docker does; Mount also
//     needs the volume's directory on the share.
//   - Remove is a no-op unless Rancher is removing the volume, as
//     rancher/storage's. When Rancher removes a volume (DELETE, the
//     remove action, RemoveVolume), a plugin of its driver (its host's,
//     else another's) deletes its directory from the share before the
//     volume is removed, unless its onRemove (driverOpts, else
//     VolumePluginOptions.OnRemove, the stack's ON_REMOVE) is retain:
//     nothing is left of a purged volume. With no plugin of the driver
//     running, nothing is deleted.
//
// The plugin behaves as rancher-nfs whatever the driver's name: a
// singleHostRW driver's volume is not held to one host.
//
// # Asynchronous resources
//
// A resource in a transitioning state (transitioning "yes") reaches the
// next one on its Options.ProvisioningReads-th read (a GET of it or a
// list page holding it), on Advance, or, with Options.SettleAfter
// (cmd/cloudsim's --settle-after, 2s by default; tests leave it 0), that
// long after it started, read or not, as Cattle's processes run on the
// server (simkit.Lifecycle.WithTime). A removed host is purged as many
// reads later (at least two), on the next Advance, or SettleAfter later.
//
// # For tests
//
// Volumes: AddStorageDriver (RancherNFS, RancherEBS), AddVolume,
// AddMount, RemoveMount and RemoveVolume seed and change them;
// StorageDriver, StorageDriverByName, StorageDrivers, StoragePool,
// StoragePools (hostIds and volumeIds filled in), Volume, VolumeByName,
// Volumes (removed ones until purged) and Mounts read them;
// StartVolumePlugin runs a host's plugin (VolumePlugin: Socket,
// Mountpoint, Export, Mounted, Close, and the protocol's calls as
// methods).
//
// AddHost, UpdateHost, SetHostState, SetHostLabels, SetHostAddresses,
// RemoveHost and PurgeHost change hosts; AddStack and AddService seed
// stacks and services in any state (what the old CCM left behind: the
// stack, an LB whose port rules point at one external service per node
// and its service links), RemoveStack removes a stack with its services
// (as by hand in the UI), AddCertificate a certificate (as uploaded in
// the UI), SetServiceState moves one; SetSetting changes a
// setting; Host, HostByHostname, Hosts, Stack, StackByName, Stacks,
// Service, ServiceByName, Services, Certificate, Certificates, Endpoints
// (an LB's public endpoints)
// and State read the cloud. Base brings Stats, Writes, Inject, Fail,
// RateLimit, ResetConnections and SetLatency. Cloud adapts the Server to
// simkit.Cloud (instances are hosts, by UUID; LoadBalancers' members are
// the hosts the linked external services' IPs name; RotateSecret gives
// the environment key a new secret), and Scenario seeds
// it from YAML for cmd/cloudsim (examples/cloudsim/rancher.yaml).
//
// # Not simulated
//
// Containers and secrets (their types answer empty); volumes'
// allocate, deallocate, snapshot, reverttosnapshot and restorefrombackup
// (offered by Cattle only for a snapshot-capable driver; never offered
// here), volume templates, storage driver and pool actions; networks,
// environments beyond the key's and OtherEnvironment, the include
// parameter but for a host's ipAddresses, host label scheduling
// affinity, toServiceStrategy upgrades, catalog templates, websockets and
// events (/v2-beta/subscribe: the Rancher CLI's --wait needs them);
// account API keys (an environment key's scope is all there is); MySQL's
// case-insensitive comparisons in filters and sorting (the simulator
// compares exactly). Cattle keeps one set of conditions per field when a
// request names a field twice with different modifiers (name=a&name_ne=b:
// which one is not defined); the simulator applies all of them. Where
// Cattle's behaviour is not documented (the code of a malformed port, a
// DELETE of an active host: 409), the choice is plausible and marked so
// here.
//
// # Fidelity
//
// Checked with the Rancher CLI v0.6.14 (github.com/rancher/cli, commit
// 7173311, the last CLI for Rancher 1.6), unchanged, built in GOPATH mode
// from its vendor/ with Go 1.26, against cmd/cloudsim on
// hack/fidelity/rancher.yaml by hack/fidelity/rancher.sh (make fidelity;
// the Go module proxy does not serve that CLI, so the script builds it
// from $RANCHER_CLI_SRC, a clone of rancher/cli, and else skips).
// RANCHER_URL is the server's URL with RANCHER_ENVIRONMENT 1a5, as
// `rancher config` stores them; with an environment's URL every command
// but stacks works too, and stacks fails as on Rancher, whose catalog
// service has no /v1-catalog/projects/<id>. Read: environment, hosts
// [-a], ps [-a] [-c], stacks (with the catalog service), volumes,
// inspect by ID and by stack/service name. Write: stop, start, scale and
// restart of a load balancer, stop and start of a host, rm of a service,
// each until Cattle settles it; a second API key. Result: every command
// answers as against Rancher 1.6 (the CLI's own quirks remain: it shows
// no ENDPOINTS, since FormatEndpoint wants untyped JSON, and a lookup by
// a name that is no service's creates the Default stack, as Lookup does
// on Rancher). Before the fixes of issue 27 every command failed at
// start-up on /schemas/schemas (404), then on limit=-2 (422). Also
// checked: go-rancher v2 (v0.1.1-0.20200505164325-7577995d47c0), the
// provider's client, by every test here.
package ranchersim

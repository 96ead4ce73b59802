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
// (Options.AccessKey/SecretKey; AddAPIKey adds more, RevokeAPIKey refuses
// one); others get 401 {"type":"error","status":401,"code":"Unauthorized",
// "message":"Unauthorized"} with a Basic challenge. GET /v2-beta and GET
// /v2-beta/projects/<project> (CATTLE_URL) answer with the header
// X-API-Schemas naming <project URL>/schemas, the schema collection,
// built in code for the types served (ids, pluralName, links self and
// collection, resourceMethods, collectionMethods, resourceActions,
// collectionFilters with their modifiers, resourceFields with create and
// update flags): go-rancher knows no other type ("Unknown schema type").
// Every link, action and next-page URL is absolute, built from the URL
// the request came to.
//
// OtherEnvironment serves a second environment of the same Rancher server
// on the same URL (Cloud.OtherAccount): project OtherProject with its own
// environment API key (OtherAccessKey, OtherSecretKey) and one host of
// its own, IDs from 1h900001 on. Requests with its access key go to it:
// its lists hold none of this environment's resources, and a GET of one
// by ID is 404 NotFound, as a key scoped to another environment gets.
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
//	GET    /services[/{id}]              every service, read-only
//	GET    /certificates[/{id}], POST, PUT, DELETE /{id}, POST /{id}?action=remove
//	GET    /_sim/state, /_sim/stats      what the cloud holds, what it served
//
// # Lists
//
// Collections are {"type":"collection","resourceType",...,"data":[...],
// "pagination":{"next","limit","partial"},"filters"}. Filters are query
// parameters on the fields the type's schema lists in collectionFilters:
// name=x (eq), and with a modifier after an underscore: name_ne,
// name_prefix, name_like (SQL %, _), name_notlike, removed_null,
// removed_notnull, id_lt/_lte/_gt/_gte; several values of one key match
// any. A field may be written in snake case (external_id, as the old CCM
// sends it); keys that name no filterable field are ignored. limit
// (default 100, at most 1000) pages a list; pagination.next is the next
// page's absolute URL (with a marker: the last ID seen) and partial says
// more follow. Lists are in creation order.
//
// # Errors
//
// Errors are {"id","type":"error","status","code","message","detail"}: 404
// NotFound for an unknown ID (go-rancher's typed ById then returns (nil,
// nil)), path or project; 422 for a request's fields, with fieldName and
// gdapi's codes (MissingRequired, InvalidCharacters, MaxLengthExceeded,
// NotUnique, InvalidReference, InvalidOption, InvalidFormat,
// MinLimitExceeded, MaxLimitExceeded); 422 InvalidAction for an action
// the type does not have, 422 ActionNotAvailable for one the resource's
// state does not offer (its actions map lists those it does); 405 for a
// POST to a resource without an action. As Cattle does, a PUT drops the
// fields the schema does not mark updatable.
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
// machine, with transitioning "yes" in the -ing states and actions only
// where the state offers them:
//
//	create (201)     registering -> inactive (startOnCreate: then activating -> active)
//	activate         inactive -> activating -> active
//	PUT, update,     active -> updating-active -> active,
//	  service links  inactive -> updating-inactive -> inactive
//	upgrade          active -> upgrading -> upgraded; finishupgrade -> finishing-upgrade -> active,
//	                 or rollback -> rolling-back -> active (the previous launch config back)
//	restart          active -> restarting -> active
//	deactivate       active -> deactivating -> inactive
//	remove, DELETE   -> removing -> removed (removed timestamp; hidden by removed_null;
//	                 services linking to it lose the link)
//
// Actions by state: inactive {activate, remove, update, setservicelinks,
// addservicelink, removeservicelink}; active {deactivate, remove, update,
// restart, upgrade, and the link actions}; upgraded {finishupgrade,
// rollback, remove}; other states {remove}. External services have no
// link actions. Actions answer 202 with the service.
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
// ports), upgraded, finishing-upgrade, rolling-back or restarting: its
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
// # Asynchronous resources
//
// Nothing moves on a timer (simkit.Lifecycle): a resource in a
// transitioning state (transitioning "yes") reaches the next one on its
// Options.ProvisioningReads-th read (a GET of it or a list page holding
// it), or on Advance. A removed host is purged as many reads later (at
// least two), or on the next Advance.
//
// # For tests
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
// Containers, volumes, networks, environments beyond the key's and
// OtherEnvironment, sorting (sort, order), the include parameter but for a
// host's ipAddresses, host label
// scheduling affinity, toServiceStrategy upgrades and cancelupgrade,
// websockets and events; account API keys (an environment key's scope is
// all there is). Where Cattle's behaviour is not documented (the code of
// a malformed port, a DELETE of an active host: 409), the choice is
// plausible and marked so here.
package ranchersim

package ranchersim

// Field constructors for the schema definitions below.
func ro(typ string) field         { return field{Type: typ, Nullable: true} }
func createOnly(typ string) field { return field{Type: typ, Create: true, Nullable: true} }
func rw(typ string) field         { return field{Type: typ, Create: true, Update: true, Nullable: true} }

func required(f field) field { f.Required = true; return f }

func withLength(f field, minLen, maxLen int, validChars string) field {
	f.MinLength, f.MaxLength, f.ValidChars = &minLen, &maxLen, validChars
	return f
}

func withRange(f field, lo, hi int) field {
	f.Min, f.Max = &lo, &hi
	return f
}

func enum(f field, def string, options ...string) field {
	f.Type, f.Options = "enum", options
	if def != "" {
		f.Default = def
	}
	return f
}

// nameField is a stack's or service's name: 1-63 of [a-zA-Z0-9-].
func nameField() field { return required(withLength(rw("string"), 1, 63, "a-zA-Z0-9-")) }

// commonFields are the read-only fields every resource has.
func commonFields(m map[string]field) map[string]field {
	for _, f := range []string{"id", "name", "state", "kind", "uuid", "description", "created", "removed",
		"transitioning", "transitioningMessage", "accountId"} {
		if _, ok := m[f]; !ok {
			m[f] = ro("string")
		}
	}
	return m
}

func in(name string) *string { return &name }

// Methods.
var (
	get       = []string{"GET"}
	getPost   = []string{"GET", "POST"}
	getPutDel = []string{"GET", "PUT", "DELETE"}
	post      = []string{"POST"}
)

// serviceActions are the actions of loadBalancerService (externalService
// has those without the service-link ones).
func serviceActions(withLinks bool) map[string]action {
	m := map[string]action{
		"activate": {Output: "service"}, "deactivate": {Output: "service"}, "remove": {Output: "service"},
		"update": {Output: "service"}, "restart": {Input: in("serviceRestart"), Output: "service"},
		"upgrade": {Input: in("serviceUpgrade"), Output: "service"}, "finishupgrade": {Output: "service"},
		"rollback": {Output: "service"}, "cancelupgrade": {Output: "service"}, "continueupgrade": {Output: "service"},
	}
	if withLinks {
		m["setservicelinks"] = action{Input: in("setServiceLinksInput"), Output: "service"}
		m["addservicelink"] = action{Input: in("addRemoveServiceLinkInput"), Output: "service"}
		m["removeservicelink"] = action{Input: in("addRemoveServiceLinkInput"), Output: "service"}
	}
	return m
}

// serviceFilters are the filters of service collections.
var serviceFilters = []string{"accountId", "created", "description", "externalId", "healthState", "id", "kind",
	"name", "removeTime", "removed", "stackId", "state", "system", "uuid", "vip"}

// schemaDefs are the types the simulator serves: go-rancher knows a type
// only from here, and says "Unknown schema type" for the others.
var schemaDefs = []schemaDef{
	{id: "schema", plural: "schemas", resourceMethods: get, collectionMethods: get},
	{id: "apiVersion", plural: "apiVersions", resourceMethods: get},
	{id: "error", plural: "errors", resourceMethods: get},
	{id: "project", plural: "projects", resourceMethods: get, collectionMethods: get,
		filters: []string{"id", "name", "state", "kind", "uuid"}, fields: commonFields(map[string]field{})},
	{
		id: "host", plural: "hosts", resourceMethods: getPutDel, collectionMethods: get,
		actions: map[string]action{
			"activate": {Output: "host"}, "deactivate": {Output: "host"}, "remove": {Output: "host"},
			"update": {Output: "host"},
		},
		filters: []string{"accountId", "agentState", "created", "description", "id", "kind", "name",
			"physicalHostId", "removeTime", "removed", "state", "uuid"},
		fields: commonFields(map[string]field{
			"name": rw("string"), "description": rw("string"), "labels": rw("map[string]"),
			"hostname": ro("string"), "agentIpAddress": ro("string"), "agentState": ro("string"),
			"physicalHostId": ro("reference[physicalHost]"), "info": ro("json"),
			"publicEndpoints": ro("array[publicEndpoint]"),
		}),
		// The dump lists twelve; the simulator serves (and embeds) the
		// one link a host document carries besides self.
		includeable: []string{"ipAddresses"},
	},
	{
		id: "ipAddress", plural: "ipAddresses", resourceMethods: get, collectionMethods: get,
		filters: []string{"accountId", "address", "created", "description", "id", "kind", "name", "removed",
			"role", "state", "uuid"},
		fields: commonFields(map[string]field{"address": ro("string"), "role": ro("string"), "hostId": ro("reference[host]")}),
	},
	{
		id: "setting", plural: "settings", resourceMethods: get, collectionMethods: get,
		filters: []string{"id", "name", "value"},
		fields:  map[string]field{"id": ro("string"), "name": ro("string"), "value": ro("string"), "activeValue": ro("string")},
	},
	{
		id: "stack", plural: "stacks", resourceMethods: getPutDel, collectionMethods: getPost,
		actions: map[string]action{"remove": {Output: "stack"}, "update": {Output: "stack"}},
		filters: []string{"accountId", "created", "description", "externalId", "group", "healthState", "id",
			"kind", "name", "removeTime", "removed", "state", "uuid"},
		fields: commonFields(map[string]field{
			"name": nameField(), "description": rw("string"), "externalId": withLength(rw("string"), 0, 128, ""),
			"group": rw("string"), "startOnCreate": createOnly("boolean"), "environment": createOnly("map[string]"),
			"serviceIds": ro("array[reference[service]]"), "healthState": ro("string"),
		}),
	},
	certificateDef,
}

// certificateDef is the certificate type: name, cert and key required
// (the key answered to the create only), the rest read from the PEM.
var certificateDef = schemaDef{
	id: "certificate", plural: "certificates", resourceMethods: getPutDel, collectionMethods: getPost,
	actions: map[string]action{"remove": {Output: "certificate"}, "update": {Output: "certificate"}},
	filters: []string{"accountId", "cert", "certChain", "created", "description", "id", "key", "kind", "name",
		"removeTime", "removed", "state", "uuid"},
	fields: commonFields(map[string]field{
		"name": required(withLength(rw("string"), 0, 255, "")), "description": withLength(rw("string"), 0, 1024, ""),
		"cert": required(withLength(rw("string"), 0, 65535, "")), "certChain": withLength(rw("string"), 0, 65535, ""),
		"key": required(withLength(rw("string"), 0, 65535, "")),
		"CN":  ro("string"), "subjectAlternativeNames": ro("array[string]"), "issuer": ro("string"),
		"issuedAt": ro("string"), "expiresAt": ro("string"), "algorithm": ro("string"), "keySize": ro("int"),
		"serialNumber": ro("string"), "version": ro("string"), "certFingerprint": ro("string"),
	}),
}

// serviceFields are the fields of loadBalancerService (lb) or
// externalService.
func serviceFields(lb bool) map[string]field {
	m := commonFields(map[string]field{
		"name": nameField(), "description": rw("string"), "stackId": createOnly("reference[stack]"),
		"externalId": createOnly("string"), "metadata": rw("map[json]"), "startOnCreate": createOnly("boolean"),
		"healthState": ro("string"), "upgrade": ro("serviceUpgrade"), "fqdn": ro("string"),
	})
	if lb {
		m["launchConfig"] = required(createOnly("launchConfig"))
		m["lbConfig"] = required(rw("lbConfig"))
		m["scale"] = field{Type: "int", Create: true, Update: true, Default: 1}
		m["currentScale"] = ro("int")
		m["publicEndpoints"] = ro("array[publicEndpoint]")
		return m
	}
	m["launchConfig"] = createOnly("launchConfig")
	m["externalIpAddresses"] = rw("array[string]")
	m["hostname"] = rw("string")
	m["healthCheck"] = createOnly("instanceHealthCheck") // update false in the v2-beta schema
	return m
}

// embedded are the types of embedded objects and action inputs, with
// their fields (create only: they are set as part of their parent).
var embedded = []schemaDef{
	{id: "launchConfig", plural: "launchConfigs", resourceMethods: get, collectionMethods: post, fields: map[string]field{
		"imageUuid": createOnly("string"), "ports": createOnly("array[string]"), "expose": createOnly("array[string]"),
		"labels": createOnly("map[string]"), "environment": createOnly("map[string]"),
	}},
	{id: "lbConfig", plural: "lbConfigs", resourceMethods: get, collectionMethods: post, fields: map[string]field{
		"portRules": {Type: "array[portRule]", Create: true}, "certificateIds": createOnly("array[reference[certificate]]"),
		"defaultCertificateId": createOnly("reference[certificate]"), "config": createOnly("string"),
		"stickinessPolicy": createOnly("loadBalancerCookieStickinessPolicy"),
	}},
	{id: "portRule", plural: "portRules", resourceMethods: get, collectionMethods: post, fields: map[string]field{
		"sourcePort": required(withRange(createOnly("int"), 1, 65535)), "targetPort": withRange(createOnly("int"), 1, 65535),
		"protocol":  enum(field{Create: true}, "http", Protocols...),
		"serviceId": createOnly("reference[service]"), "hostname": createOnly("string"), "path": createOnly("string"),
		"priority": withRange(createOnly("int"), 1, 1<<31-1), "backendName": createOnly("string"),
		"selector": createOnly("string"),
	}},
	{id: "loadBalancerCookieStickinessPolicy", plural: "loadBalancerCookieStickinessPolicies", resourceMethods: get,
		collectionMethods: post, fields: map[string]field{
			"name": createOnly("string"), "cookie": createOnly("string"), "domain": createOnly("string"),
			"indirect": createOnly("boolean"), "nocache": createOnly("boolean"), "postonly": createOnly("boolean"),
			"mode": enum(createOnly(""), "", StickinessModes...),
		}},
	{id: "instanceHealthCheck", plural: "instanceHealthChecks", resourceMethods: get, collectionMethods: post,
		fields: map[string]field{
			"port": required(withRange(createOnly("int"), 1, 65535)), "requestLine": createOnly("string"),
			"interval": createOnly("int"), "responseTimeout": createOnly("int"), "healthyThreshold": createOnly("int"),
			"unhealthyThreshold": createOnly("int"), "initializingTimeout": createOnly("int"), "strategy": createOnly("string"),
		}},
	{id: "publicEndpoint", plural: "publicEndpoints", resourceMethods: get, fields: map[string]field{
		"ipAddress": ro("string"), "port": ro("int"), "hostId": ro("reference[host]"),
		"instanceId": ro("reference[instance]"), "serviceId": ro("reference[service]"),
	}},
	{id: "serviceLink", plural: "serviceLinks", resourceMethods: get, collectionMethods: post, fields: map[string]field{
		"serviceId": required(field{Type: "reference[service]", Create: true}), "name": createOnly("string"),
	}},
	{id: "setServiceLinksInput", plural: "setServiceLinksInputs", resourceMethods: get, collectionMethods: post,
		fields: map[string]field{"serviceLinks": createOnly("array[serviceLink]")}},
	{id: "addRemoveServiceLinkInput", plural: "addRemoveServiceLinkInputs", resourceMethods: get, collectionMethods: post,
		fields: map[string]field{"serviceLink": required(createOnly("serviceLink"))}},
	{id: "serviceUpgrade", plural: "serviceUpgrades", resourceMethods: get, collectionMethods: post,
		fields: map[string]field{"inServiceStrategy": createOnly("inServiceUpgradeStrategy")}},
	{id: "inServiceUpgradeStrategy", plural: "inServiceUpgradeStrategys", resourceMethods: get, collectionMethods: post,
		fields: map[string]field{
			"launchConfig": createOnly("launchConfig"), "previousLaunchConfig": ro("launchConfig"),
			"startFirst": createOnly("boolean"), "batchSize": createOnly("int"), "intervalMillis": createOnly("int"),
		}},
	{id: "serviceRestart", plural: "serviceRestarts", resourceMethods: get, collectionMethods: post,
		fields: map[string]field{"rollingRestartStrategy": createOnly("rollingRestartStrategy")}},
}

func init() {
	schemaDefs = append(schemaDefs,
		schemaDef{id: KindLoadBalancer, plural: "loadBalancerServices", resourceMethods: getPutDel,
			collectionMethods: getPost, actions: serviceActions(true), filters: serviceFilters, fields: serviceFields(true)},
		schemaDef{id: KindExternal, plural: "externalServices", resourceMethods: getPutDel,
			collectionMethods: getPost, actions: serviceActions(false), filters: serviceFilters, fields: serviceFields(false)},
		// service: every kind's parent type, whose resources are read,
		// updated (scale, as the Rancher CLI's scale sends it), removed
		// and acted on as under their own type.
		schemaDef{id: "service", plural: "services", resourceMethods: getPutDel, collectionMethods: get,
			actions: serviceActions(true), filters: serviceFilters, fields: commonFields(map[string]field{
				"stackId": ro("reference[stack]"), "scale": withRange(rw("int"), 0, 1000000),
				"description": rw("string"), "metadata": rw("map[json]"),
			})},
	)
	schemaDefs = append(schemaDefs, storageDefs...)
	schemaDefs = append(schemaDefs, emptyTypes...)
	schemaDefs = append(schemaDefs, embedded...)
}

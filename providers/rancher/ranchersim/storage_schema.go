package ranchersim

// The schemas of volumes, storage drivers, storage pools and mounts, as
// an environment API key reads them: go-rancher's docs/input/schemas.json
// (v2-beta) for the fields, actions and collection filters, with the
// project's view of Cattle v0.183's authorization (resources/content/
// schema/user/user-auth.json: a volume's accessMode is read-only, its
// activate and deactivate actions hidden; project-auth.json: storage
// drivers and pools read-only).

// volumeDef is the volume type: created with a name and a driver (or a
// storage driver's ID), changed in its description, driverOpts and
// hostId, removed and purged.
var volumeDef = schemaDef{
	id: "volume", plural: "volumes", resourceMethods: getPutDel, collectionMethods: getPost,
	actions: map[string]action{
		"allocate": {Output: "volume"}, "create": {Output: "volume"}, "deallocate": {Output: "volume"},
		"purge": {Output: "volume"}, "remove": {Output: "volume"}, "restore": {Output: "volume"},
		"update":            {Output: "volume"},
		"restorefrombackup": {Input: in("restoreFromBackupInput"), Output: "volume"},
		"reverttosnapshot":  {Input: in("revertToSnapshotInput"), Output: "volume"},
		"snapshot":          {Input: in("volumeSnapshotInput"), Output: "snapshot"},
	},
	filters: []string{"accessMode", "accountId", "allocationState", "attachedState", "created", "deploymentUnitId",
		"description", "deviceNumber", "externalId", "format", "hostId", "id", "imageId", "instanceId", "kind", "name",
		"physicalSizeMb", "removeTime", "removed", "sizeMb", "stackId", "state", "storageDriverId", "uri", "uuid",
		"virtualSizeMb", "volumeTemplateId", "zoneId"},
	fields: commonFields(map[string]field{
		"name":        required(withLength(createOnly("string"), 0, 255, "")),
		"description": withLength(rw("string"), 0, 1024, ""),
		"driver":      {Type: "string", Create: true}, "driverOpts": rw("map[string]"),
		"sizeMb": createOnly("int"), "stackId": createOnly("reference[stack]"),
		"volumeTemplateId": createOnly("reference[volumeTemplate]"), "hostId": rw("reference[host]"),
		"storageDriverId": {Type: "reference[storageDriver]", Create: true},
		"accessMode":      ro("string"), "externalId": ro("string"), "uri": ro("string"),
		"imageId": ro("reference[image]"), "instanceId": ro("reference[instance]"),
		"isHostPath": {Type: "boolean", Default: false}, "mounts": {Type: "array[mountEntry]"},
	}),
}

// storageDriverDef is the storageDriver type: read-only to an
// environment's key (its stack's storage driver service registers it).
var storageDriverDef = schemaDef{
	id: "storageDriver", plural: "storageDrivers", resourceMethods: get, collectionMethods: get,
	actions: map[string]action{
		"activate": {Output: "storageDriver"}, "create": {Output: "storageDriver"}, "deactivate": {Output: "storageDriver"},
		"remove": {Output: "storageDriver"}, "update": {Output: "storageDriver"},
	},
	filters: []string{"accountId", "created", "description", "id", "kind", "name", "removeTime", "removed", "serviceId",
		"state", "uuid"},
	fields: commonFields(map[string]field{
		"name": withLength(rw("string"), 0, 255, ""), "description": withLength(rw("string"), 0, 1024, ""),
		"scope":              enum(field{}, "", ScopeLocal, ScopeEnvironment, ScopeCustom),
		"volumeAccessMode":   enum(field{}, AccessMultiHostRW, AccessSingleHostRW, AccessSingleInstanceRW, AccessMultiHostRW),
		"volumeCapabilities": ro("array[string]"), "blockDevicePath": ro("string"),
		"serviceId": ro("reference[service]"),
	}),
}

// storagePoolDef is the storagePool type: what Cattle makes of a storage
// driver for the hosts that reach its volumes.
var storagePoolDef = schemaDef{
	id: "storagePool", plural: "storagePools", resourceMethods: get, collectionMethods: get,
	actions: map[string]action{
		"activate": {Output: "storagePool"}, "create": {Output: "storagePool"}, "deactivate": {Output: "storagePool"},
		"purge": {Output: "storagePool"}, "remove": {Output: "storagePool"}, "restore": {Output: "storagePool"},
		"update": {Output: "storagePool"},
	},
	filters: []string{"accountId", "agentId", "created", "description", "driverName", "external", "externalId", "id",
		"kind", "name", "physicalTotalSizeMb", "removeTime", "removed", "state", "storageDriverId", "uuid",
		"virtualTotalSizeMb", "volumeAccessMode", "zoneId"},
	fields: commonFields(map[string]field{
		"name": withLength(rw("string"), 0, 255, ""), "description": withLength(rw("string"), 0, 1024, ""),
		"driverName": ro("string"), "externalId": ro("string"), "hostIds": ro("array[reference[host]]"),
		"volumeIds": ro("array[reference[volume]]"), "storageDriverId": ro("reference[storageDriver]"),
		"volumeAccessMode": ro("string"), "volumeCapabilities": ro("array[string]"), "blockDevicePath": ro("string"),
	}),
}

// mountDef is the mount type: a container's use of a volume at a path.
var mountDef = schemaDef{
	id: "mount", plural: "mounts", resourceMethods: get, collectionMethods: get,
	actions: map[string]action{"create": {Output: "mount"}, "deactivate": {Output: "mount"}, "remove": {Output: "mount"}},
	filters: []string{"accountId", "created", "description", "id", "instanceId", "kind", "name", "path", "permissions",
		"removeTime", "removed", "state", "uuid", "volumeId"},
	fields: commonFields(map[string]field{
		"name": withLength(rw("string"), 0, 255, ""), "description": withLength(rw("string"), 0, 1024, ""),
		"instanceId": ro("reference[instance]"), "volumeId": ro("reference[volume]"), "path": ro("string"),
		"permissions": ro("string"),
	}),
}

// storageDefs are the storage types the simulator serves, and the
// embedded mountEntry (a volume's mounts field).
var storageDefs = []schemaDef{
	volumeDef, storageDriverDef, storagePoolDef, mountDef,
	{id: "mountEntry", plural: "mountEntrys", resourceMethods: get, fields: map[string]field{
		"instanceId": {Type: "reference[instance]"}, "instanceName": {Type: "string"}, "path": {Type: "string"},
		"volumeId": {Type: "reference[volume]"}, "volumeName": {Type: "string"},
	}},
}

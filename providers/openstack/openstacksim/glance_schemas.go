package openstacksim

// imageSchema is Glance's /v2/schemas/image: the JSON Schema of an image
// as the simulator shows it, additional properties being strings.
func imageSchema() map[string]any {
	str := func(extra ...any) map[string]any { return schemaOf([]any{"null", "string"}, extra...) }
	ro := func(typ any) map[string]any { return schemaOf(typ, "readOnly", true) }
	return map[string]any{
		"name": "image",
		"properties": map[string]any{
			"id":               schemaOf("string", "pattern", "^([0-9a-fA-F]){8}-([0-9a-fA-F]){4}-([0-9a-fA-F]){4}-([0-9a-fA-F]){4}-([0-9a-fA-F]){12}$"),
			"name":             str("maxLength", 255),
			"status":           schemaOf("string", "readOnly", true, "enum", []string{"queued", "saving", "active", "killed", "deleted", "uploading", "importing", "pending_delete", "deactivated"}),
			"visibility":       schemaOf("string", "enum", []string{"community", "public", "private", "shared"}),
			"protected":        schemaOf("boolean"),
			"os_hidden":        schemaOf("boolean"),
			"checksum":         str("readOnly", true, "maxLength", 32),
			"os_hash_algo":     str("readOnly", true, "maxLength", 64),
			"os_hash_value":    str("readOnly", true, "maxLength", 128),
			"owner":            str("maxLength", 255),
			"size":             ro([]any{"null", "integer"}),
			"virtual_size":     ro([]any{"null", "integer"}),
			"container_format": str("enum", []any{nil, "ami", "ari", "aki", "bare", "ovf", "ova", "docker", "compressed"}),
			"disk_format":      str("enum", []any{nil, "ami", "ari", "aki", "vhd", "vhdx", "vmdk", "raw", "qcow2", "vdi", "iso", "ploop"}),
			"created_at":       ro("string"),
			"updated_at":       ro("string"),
			"tags":             schemaOf("array", "items", schemaOf("string", "maxLength", 255)),
			"min_ram":          schemaOf("integer"),
			"min_disk":         schemaOf("integer"),
			"self":             ro("string"),
			"file":             ro("string"),
			"schema":           ro("string"),
		},
		"additionalProperties": schemaOf("string"),
		"links": []map[string]string{
			{"rel": "self", "href": "{self}"},
			{"rel": "enclosure", "href": "{file}"},
			{"rel": "describedby", "href": "{schema}"},
		},
	}
}

// imagesSchema is Glance's /v2/schemas/images: a page of images.
func imagesSchema() map[string]any {
	return map[string]any{
		"name": "images",
		"properties": map[string]any{
			"images": schemaOf("array", "items", imageSchema()),
			"schema": schemaOf("string"),
			"first":  schemaOf("string"),
			"next":   schemaOf("string"),
		},
		"links": []map[string]string{
			{"rel": "first", "href": "{first}"},
			{"rel": "next", "href": "{next}"},
			{"rel": "describedby", "href": "{schema}"},
		},
	}
}

// schemaOf is {"type": typ} with the extra key/value pairs.
func schemaOf(typ any, extra ...any) map[string]any {
	out := map[string]any{"type": typ}
	for i := 0; i+1 < len(extra); i += 2 {
		out[extra[i].(string)] = extra[i+1]
	}
	return out
}

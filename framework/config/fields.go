package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// Field describes one setting of a config struct, for generated reference
// documentation.
type Field struct {
	Env      string // environment variable; "" if none. A secret also reads Env+"_FILE".
	FileKey  string // dotted key in the config file, such as "loadBalancer.namePrefix"; "" if none
	Type     string // "string", "bool", "int", "float64", "duration", "[]string", "secret", ...
	Default  string
	Required bool
	Doc      string
	// SecretKey is the key of the Kubernetes Secret make-secret stores the
	// field's value under, from a `secret:"<key>"` tag; "" if none.
	SecretKey string
}

// field is a Field with what Load needs to reach it.
type field struct {
	Field
	name  string // Go path, such as "LB.Prefix"
	index []int  // for reflect.Value.FieldByIndex
	typ   reflect.Type
}

// label names f in error messages the way an operator would set it.
func (f *field) label() string {
	switch {
	case f.Env != "":
		return f.Env
	case f.FileKey != "":
		return fmt.Sprintf("cloud config key %q", f.FileKey)
	}
	return "field " + f.name
}

// Fields describes the settings of the config struct v, a struct or a pointer
// to one (which may be nil), in field order. Its error reports every tag Load
// could not honour, such as an env tag on an unsupported type or a default
// that does not parse, so a test calling Fields catches them before users do.
func Fields(v any) ([]Field, error) {
	t := reflect.TypeOf(v)
	if t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("config: want a struct or a pointer to one, got %T", v)
	}
	fields, err := fieldsOf(t)
	if err != nil {
		return nil, err
	}
	out := make([]Field, len(fields))
	for i, f := range fields {
		out[i] = f.Field
	}
	return out, nil
}

// fieldsOf walks the struct type t and its nested struct values.
func fieldsOf(t reflect.Type) ([]field, error) {
	var w walker
	w.walk(t, nil, "", true, "")
	w.checkEnvUnique()
	if len(w.errs) > 0 {
		return nil, fmt.Errorf("config: invalid tags on %s: %w", t, errors.Join(w.errs...))
	}
	return w.fields, nil
}

type walker struct {
	fields []field
	errs   []error
}

// walk adds the fields of t. keyPrefix is the file key of t, and inFile
// whether t can be set from the file at all.
func (w *walker) walk(t reflect.Type, index []int, keyPrefix string, inFile bool, namePrefix string) {
	for i := range t.NumField() {
		sf := t.Field(i)
		if promoted := sf.Anonymous && sf.Type.Kind() == reflect.Struct; !sf.IsExported() && !promoted {
			continue
		}
		idx := append(slices.Clip(index), i)
		name := joinPath(namePrefix, sf.Name)
		key, keyOK := jsonKey(sf)
		fileKey := ""
		if inFile && keyOK {
			fileKey = joinPath(keyPrefix, key)
		}

		if isSection(sf.Type) {
			if hasSettingTags(sf) {
				w.errorf(name, "env, default and required tags are not supported on a struct; tag its fields")
			}
			if sf.Anonymous && jsonTagName(sf) == "" { // promoted, as encoding/json does
				w.walk(sf.Type, idx, keyPrefix, inFile, namePrefix)
			} else {
				w.walk(sf.Type, idx, fileKey, inFile && keyOK, name)
			}
			continue
		}
		if !sf.IsExported() {
			continue
		}
		if f, ok := w.leaf(sf, name, fileKey, idx); ok {
			w.fields = append(w.fields, f)
		}
	}
}

// leaf describes a non-struct field; ok is false for a field that cannot be
// configured.
func (w *walker) leaf(sf reflect.StructField, name, fileKey string, index []int) (f field, ok bool) {
	f = field{
		Field: Field{
			Env:     sf.Tag.Get("env"),
			FileKey: fileKey,
			Type:    typeName(sf.Type),
			Default: sf.Tag.Get("default"),
			Doc:     sf.Tag.Get("doc"),

			SecretKey: sf.Tag.Get("secret"),
		},
		name:  name,
		index: index,
		typ:   sf.Type,
	}
	if f.Env == "-" {
		f.Env = ""
	}
	if req, has := sf.Tag.Lookup("required"); has {
		b, err := strconv.ParseBool(req)
		if err != nil {
			w.errorf(name, "required tag %q is not a bool", req)
		}
		f.Required = b
	}
	if f.SecretKey != "" && !validSecretKey(f.SecretKey) {
		w.errorf(name, "secret tag %q is not a Secret key (letters, digits, '-', '_' and '.')", f.SecretKey)
	}
	if f.Env == "" && f.FileKey == "" && f.Default == "" && !f.Required {
		if f.SecretKey != "" {
			w.errorf(name, "secret tag on a field that is not configured")
		}
		return field{}, false
	}
	if (f.Env != "" || f.Default != "") && !parsable(sf.Type) {
		w.errorf(name, "type %s cannot be set from an environment variable or default", sf.Type)
		return f, true
	}
	if f.Default != "" {
		if err := setString(reflect.New(sf.Type).Elem(), f.Default); err != nil {
			w.errorf(name, "default: %v", err)
		}
	}
	return f, true
}

func (w *walker) checkEnvUnique() {
	keys := map[string]string{}
	for _, f := range w.fields {
		if f.SecretKey == "" {
			continue
		}
		if prev, ok := keys[f.SecretKey]; ok {
			w.errorf(f.name, "secret key %s is also the key of %s", f.SecretKey, prev)
		}
		keys[f.SecretKey] = f.name
	}
	owner := map[string]string{}
	claim := func(env, name string) {
		if prev, ok := owner[env]; ok {
			w.errorf(name, "environment variable %s is also read by %s", env, prev)
			return
		}
		owner[env] = name
	}
	for _, f := range w.fields {
		if f.Env == "" {
			continue
		}
		claim(f.Env, f.name)
		if f.typ == secretType {
			claim(f.Env+"_FILE", f.name)
		}
	}
}

func (w *walker) errorf(name, format string, args ...any) {
	w.errs = append(w.errs, fmt.Errorf("field %s: %s", name, fmt.Sprintf(format, args...)))
}

// isSection reports whether Load walks into fields of type t rather than
// setting them whole.
func isSection(t reflect.Type) bool {
	return t.Kind() == reflect.Struct && t != secretType && !isTextUnmarshaler(t) && !isJSONUnmarshaler(t)
}

var jsonUnmarshalerType = reflect.TypeFor[json.Unmarshaler]()

func isJSONUnmarshaler(t reflect.Type) bool {
	return t.Implements(jsonUnmarshalerType) || reflect.PointerTo(t).Implements(jsonUnmarshalerType)
}

func hasSettingTags(sf reflect.StructField) bool {
	for _, tag := range []string{"env", "default", "required", "secret"} {
		if _, ok := sf.Tag.Lookup(tag); ok {
			return true
		}
	}
	return false
}

// jsonKey returns the key encoding/json uses for sf; ok is false for a field
// it skips.
func jsonKey(sf reflect.StructField) (key string, ok bool) {
	if sf.Tag.Get("json") == "-" {
		return "", false
	}
	if name := jsonTagName(sf); name != "" {
		return name, true
	}
	return sf.Name, true
}

func jsonTagName(sf reflect.StructField) string {
	name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
	return name
}

func joinPath(prefix, name string) string {
	if prefix == "" {
		return name
	}
	return prefix + "." + name
}

// Markdown renders the settings of the config struct v as a reference page
// titled title.
func Markdown(title string, v any) ([]byte, error) {
	fields, err := Fields(v)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "# %s\n\n", title)
	b.WriteString("Settings come from the file named by `--cloud-config` and from environment variables; " +
		"an environment variable overrides the file. A secret can instead be read from the file named by " +
		"its variable with a `_FILE` suffix, which is re-read when it changes.\n\n")
	b.WriteString("| Environment variable | Config file key | Type | Default | Required | Description |\n")
	b.WriteString("|---|---|---|---|---|---|\n")
	for _, f := range fields {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n",
			envCell(f), code(f.FileKey), cell(f.Type), code(f.Default), requiredCell(f), cell(f.Doc))
	}
	writeSecretKeys(&b, fields)
	return b.Bytes(), nil
}

// EnvMarkdown renders the reference of a config struct that is read from
// the environment only, such as a CSI driver's, which takes no
// --cloud-config file: the title, then intro (the caller's paragraph on
// where the settings come from and what else sets them), then one row per
// setting with its variable, type, default, whether it is required and its
// doc. A setting without an env tag cannot be set this way: the error
// names it, so a docs generator fails instead of leaving it out.
func EnvMarkdown(title, intro string, v any) ([]byte, error) {
	fields, err := Fields(v)
	if err != nil {
		return nil, err
	}
	var noEnv []string
	secrets := false
	for _, f := range fields {
		if f.Env == "" {
			noEnv = append(noEnv, f.FileKey)
		}
		secrets = secrets || f.Type == "secret"
	}
	if len(noEnv) > 0 {
		return nil, fmt.Errorf("settings without an environment variable: %s", strings.Join(noEnv, ", "))
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "# %s\n\n", title)
	if intro = strings.TrimSpace(intro); intro != "" {
		b.WriteString(intro + "\n\n")
	}
	if secrets {
		b.WriteString("A secret can instead be read from the file named by its variable with a `_FILE` suffix, " +
			"which is re-read when it changes.\n\n")
	}
	b.WriteString("| Environment variable | Type | Default | Required | Description |\n")
	b.WriteString("|---|---|---|---|---|\n")
	for _, f := range fields {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", envCell(f), cell(f.Type), code(f.Default), requiredCell(f), cell(f.Doc))
	}
	return b.Bytes(), nil
}

// envCell is a setting's variable, and its _FILE form for a secret.
func envCell(f Field) string {
	env := code(f.Env)
	if f.Env != "" && f.Type == "secret" {
		env += "<br>" + code(f.Env+"_FILE")
	}
	return env
}

func requiredCell(f Field) string {
	if f.Required {
		return "yes"
	}
	return ""
}

// writeSecretKeys lists the keys make-secret stores, when there are any.
func writeSecretKeys(b *bytes.Buffer, fields []Field) {
	var keys []string
	for _, f := range fields {
		if f.SecretKey != "" {
			from := f.Env
			if from == "" {
				from = f.FileKey
			}
			if from == f.SecretKey {
				keys = append(keys, code(f.SecretKey))
				continue
			}
			keys = append(keys, fmt.Sprintf("%s (%s)", code(f.SecretKey), code(from)))
		}
	}
	if len(keys) == 0 {
		return
	}
	b.WriteString("\n`make-secret` (see [make-secret.md](../make-secret.md)) stores the settings that are set in the Secret under these keys: " +
		strings.Join(keys, ", ") + ".\n")
}

func code(s string) string {
	if s == "" {
		return ""
	}
	return "`" + strings.Join(strings.Fields(strings.ReplaceAll(s, "|", `\|`)), " ") + "`"
}

// cell escapes s for a Markdown table cell: pipes, and outside `code`
// spans the angle brackets a renderer would take for HTML
// (k8s:<cluster ID> would lose its placeholder).
func cell(s string) string {
	parts := strings.Split(strings.ReplaceAll(s, "|", `\|`), "`")
	for i := 0; i < len(parts); i += 2 {
		parts[i] = angles.Replace(parts[i])
	}
	return strings.Join(strings.Fields(strings.Join(parts, "`")), " ")
}

var angles = strings.NewReplacer("<", "&lt;", ">", "&gt;")

package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"sigs.k8s.io/yaml"
)

// Format decodes a config file into a config struct. [YAML] is built in; a
// cloud whose existing CCM reads another syntax (OpenStack's INI) supplies its
// own.
//
// Decode must leave fields whose keys are absent untouched, so defaults
// survive; report every problem it can, joined with errors.Join, each naming
// its key; and never quote the value of a [Secret].
type Format interface {
	Name() string
	Decode(data []byte, out any) error
}

// YAML decodes YAML (or JSON) by the fields' json tags, as sigs.k8s.io/yaml
// does, and strictly: duplicate and unknown keys are errors. It reports every
// unknown key and mistyped value at once, each naming its key, and never
// quotes the value of a Secret. Beyond encoding/json, a time.Duration is
// written as a string such as "30s", and a number or bool given for a string
// field is taken as its text (region: 1 sets "1").
var YAML Format = yamlFormat{}

type yamlFormat struct{}

func (yamlFormat) Name() string { return "yaml" }

func (yamlFormat) Decode(data []byte, out any) error {
	rv := reflect.ValueOf(out)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return fmt.Errorf("decode into %T: want a non-nil pointer", out)
	}
	var tree any
	if err := yaml.UnmarshalStrict(data, &tree, useNumber); err != nil {
		return err // syntax errors and duplicate keys
	}
	if tree == nil { // empty document
		return nil
	}

	// Check the whole tree first, dropping bad keys so that the good ones
	// still apply: a typo in one key must not also make Load report a
	// required setting the file does provide as missing.
	var n normalizer
	tree, ok := n.value(tree, rv.Type().Elem(), "")
	if !ok {
		return errors.Join(n.errs...)
	}
	j, err := json.Marshal(tree)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(j))
	dec.DisallowUnknownFields()
	if err := dec.Decode(out); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			err = fmt.Errorf("key %q: cannot use a %s as %s", te.Field, te.Value, te.Type)
		}
		n.errs = append(n.errs, err)
	}
	return errors.Join(n.errs...)
}

func useNumber(d *json.Decoder) *json.Decoder {
	d.UseNumber()
	return d
}

// normalizer checks a decoded YAML tree against the Go type it will be
// decoded into, collecting every problem, and rewrites what encoding/json
// would reject but a person would write: durations as strings, scalars for
// strings.
type normalizer struct{ errs []error }

// errorf records a problem with the value at path and returns false, for
// value's ok.
func (n *normalizer) errorf(path, format string, args ...any) bool {
	where := "the document"
	if path != "" {
		where = fmt.Sprintf("key %q", path)
	}
	n.errs = append(n.errs, fmt.Errorf("%s: %s", where, fmt.Sprintf(format, args...)))
	return false
}

// value returns v, rewritten for t, and whether it is fit to decode into t.
func (n *normalizer) value(v any, t reflect.Type, path string) (any, bool) {
	if v == nil {
		return nil, true
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == secretType:
		if _, ok := v.(string); !ok {
			return v, n.errorf(path, "a secret must be a string, got %s", kindOf(v))
		}
		return v, true
	case t == durationType:
		s, ok := v.(string)
		if !ok {
			return v, n.errorf(path, "want a duration such as \"30s\", got %s", kindOf(v))
		}
		d, err := time.ParseDuration(strings.TrimSpace(s))
		if err != nil {
			return v, n.errorf(path, "invalid duration %q (want a number with a unit, such as 30s or 5m)", s)
		}
		return json.Number(strconv.FormatInt(int64(d), 10)), true
	case isJSONUnmarshaler(t) || isTextUnmarshaler(t):
		return v, true // the type decodes itself
	}

	switch t.Kind() {
	case reflect.Struct:
		return n.object(v, t, path)
	case reflect.Map:
		m, ok := v.(map[string]any)
		if !ok {
			return v, n.errorf(path, "want a mapping, got %s", kindOf(v))
		}
		for _, k := range slices.Sorted(maps.Keys(m)) {
			if m[k], ok = n.value(m[k], t.Elem(), joinPath(path, k)); !ok {
				delete(m, k)
			}
		}
		return m, true
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return v, true // []byte is base64 text
		}
		list, ok := v.([]any)
		if !ok {
			return v, n.errorf(path, "want a list, got %s", kindOf(v))
		}
		all := true
		for i := range list {
			list[i], ok = n.value(list[i], t.Elem(), fmt.Sprintf("%s[%d]", path, i))
			all = all && ok
		}
		return list, all
	case reflect.String:
		switch x := v.(type) {
		case string:
			return v, true
		case json.Number:
			return x.String(), true
		case bool:
			return strconv.FormatBool(x), true
		}
		return v, n.errorf(path, "want a string, got %s", kindOf(v))
	case reflect.Bool:
		if _, ok := v.(bool); !ok {
			return v, n.errorf(path, "want true or false, got %s", kindOf(v))
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		x, ok := v.(json.Number)
		if !ok {
			return v, n.errorf(path, "want an integer, got %s", kindOf(v))
		}
		if i, err := strconv.ParseInt(x.String(), 10, 64); err != nil || reflect.New(t).Elem().OverflowInt(i) {
			return v, n.errorf(path, "%s is not an integer in the range of %s", x, typeName(t))
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		x, ok := v.(json.Number)
		if !ok {
			return v, n.errorf(path, "want an integer, got %s", kindOf(v))
		}
		if u, err := strconv.ParseUint(x.String(), 10, 64); err != nil || reflect.New(t).Elem().OverflowUint(u) {
			return v, n.errorf(path, "%s is not an integer in the range of %s", x, typeName(t))
		}
	case reflect.Float32, reflect.Float64:
		if _, ok := v.(json.Number); !ok {
			return v, n.errorf(path, "want a number, got %s", kindOf(v))
		}
	}
	return v, true
}

// object checks the keys of mapping v against struct type t, matching them
// as encoding/json does: exactly, else case-insensitively. Unknown and bad
// keys are dropped.
func (n *normalizer) object(v any, t reflect.Type, path string) (any, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		return v, n.errorf(path, "want a mapping, got %s", kindOf(v))
	}
	fields := jsonFields(t)
	for _, k := range slices.Sorted(maps.Keys(m)) {
		ft, known := fields[k]
		if !known {
			for _, name := range slices.Sorted(maps.Keys(fields)) {
				if strings.EqualFold(name, k) {
					ft, known = fields[name], true
					break
				}
			}
		}
		if !known {
			n.errs = append(n.errs, fmt.Errorf("unknown key %q", joinPath(path, k)))
			delete(m, k)
			continue
		}
		if m[k], ok = n.value(m[k], ft, joinPath(path, k)); !ok {
			delete(m, k)
		}
	}
	return m, true
}

// jsonFields returns the types of the fields encoding/json decodes into t,
// by key, with fields of untagged embedded structs promoted. Where names
// clash the shallower field wins.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	level := []reflect.Type{t}
	visited := map[reflect.Type]bool{}
	for len(level) > 0 {
		var next []reflect.Type
		for _, st := range level {
			if visited[st] {
				continue
			}
			visited[st] = true
			for i := range st.NumField() {
				sf := st.Field(i)
				key, ok := jsonKey(sf)
				if !ok {
					continue
				}
				if sf.Anonymous && jsonTagName(sf) == "" {
					et := sf.Type
					if et.Kind() == reflect.Pointer {
						et = et.Elem()
					}
					if et.Kind() == reflect.Struct {
						next = append(next, et)
						continue
					}
				}
				if _, taken := out[key]; sf.IsExported() && !taken {
					out[key] = sf.Type
				}
			}
		}
		level = next
	}
	return out
}

func kindOf(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a bool"
	case []any:
		return "a list"
	case map[string]any:
		return "a mapping"
	}
	return fmt.Sprintf("%T", v)
}

package annotations

import (
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/api/validate/content"
)

// Struct tags read by this package.
const (
	tagAnnotation = "annotation"
	tagDefault    = "default"
	tagEnum       = "enum"
	tagMin        = "min"
	tagMax        = "max"
	tagUnit       = "unit"
	tagAlias      = "alias"
	tagDoc        = "doc"
	tagDeprecated = "deprecated"
)

// typeInfo is everything Decode needs to know about one struct type. It is
// built once per type and cached, since Decode runs on every Service sync.
type typeInfo struct {
	typ    reflect.Type
	fields []field
	// relative and absolute index every key and alias (see index).
	relative map[string]keyRef
	absolute map[string]keyRef
	err      error // a programming error in the struct; cached like the rest

	mu       sync.Mutex                       // serialises writers of prefixes
	prefixes atomic.Pointer[map[string]error] // prefix -> result of checkPrefix
}

// field is one annotated struct field.
type field struct {
	path  string // Go selector from the struct root, e.g. "HealthCheck.Port"
	index []int  // for reflect.Value.FieldByIndex

	key     string   // as written in the tag
	aliases []string // as written in the tag
	def     string
	doc     string
	depr    string
	c       constraints
	codec
}

// keyRef points from an annotation key to the field that claims it. rank 0 is
// the primary key, rank i the i-th alias; the lowest rank present wins.
type keyRef struct {
	field int
	rank  int
}

var typeCache sync.Map // reflect.Type -> *typeInfo

// typeInfoFor returns the cached description of struct type t.
func typeInfoFor(t reflect.Type) (*typeInfo, error) {
	if v, ok := typeCache.Load(t); ok {
		ti := v.(*typeInfo)
		return ti, ti.err
	}
	v, _ := typeCache.LoadOrStore(t, newTypeInfo(t))
	ti := v.(*typeInfo)
	return ti, ti.err
}

func newTypeInfo(t reflect.Type) *typeInfo {
	ti := &typeInfo{
		typ:      t,
		relative: map[string]keyRef{},
		absolute: map[string]keyRef{},
	}
	var errs []error
	ti.walk(t, nil, "", &errs)
	ti.err = errors.Join(errs...)
	return ti
}

// walk collects the annotated fields of struct type t, descending into
// untagged nested and embedded struct values.
func (ti *typeInfo) walk(t reflect.Type, index []int, path string, errs *[]error) {
	for i := range t.NumField() {
		sf := t.Field(i)
		idx := append(slices.Clip(index), i)
		name := path + sf.Name
		key, tagged := sf.Tag.Lookup(tagAnnotation)
		if !tagged {
			if sf.Type.Kind() == reflect.Struct && (sf.IsExported() || sf.Anonymous) {
				ti.walk(sf.Type, idx, name+".", errs)
			}
			continue
		}
		f, err := newField(sf, idx, name, key)
		if err != nil {
			*errs = append(*errs, fmt.Errorf("annotations: %v field %s: %w", ti.typ, name, err))
			continue
		}
		if err := ti.add(f); err != nil {
			*errs = append(*errs, fmt.Errorf("annotations: %v field %s: %w", ti.typ, name, err))
		}
	}
}

// add registers f and its keys, rejecting a key another field already uses.
func (ti *typeInfo) add(f field) error {
	keys := f.keys()
	for i, k := range keys {
		if slices.Contains(keys[:i], k) {
			return fmt.Errorf("key %q is listed twice", k)
		}
		if prev, ok := ti.index(k)[k]; ok {
			return fmt.Errorf("key %q is already used by field %s", k, ti.fields[prev.field].path)
		}
	}
	for rank, k := range keys {
		ti.index(k)[k] = keyRef{field: len(ti.fields), rank: rank}
	}
	ti.fields = append(ti.fields, f)
	return nil
}

// index is the map that holds key: relative keys are looked up after
// stripping the prefix, absolute keys as they are.
func (ti *typeInfo) index(key string) map[string]keyRef {
	if isAbsolute(key) {
		return ti.absolute
	}
	return ti.relative
}

// keys returns the primary key and then the aliases, in precedence order.
func (f *field) keys() []string { return append([]string{f.key}, f.aliases...) }

func newField(sf reflect.StructField, index []int, path, key string) (field, error) {
	if !sf.IsExported() {
		return field{}, errors.New("annotation tag on an unexported field")
	}
	key = strings.TrimSpace(key)
	if key == "" {
		return field{}, errors.New("empty annotation tag")
	}
	f := field{
		path:  path,
		index: index,
		key:   key,
		def:   sf.Tag.Get(tagDefault),
		doc:   sf.Tag.Get(tagDoc),
		depr:  sf.Tag.Get(tagDeprecated),
		c: constraints{
			min:  sf.Tag.Get(tagMin),
			max:  sf.Tag.Get(tagMax),
			unit: sf.Tag.Get(tagUnit),
		},
	}
	var err error
	if f.c.enum, err = splitTag(sf.Tag, tagEnum); err != nil {
		return field{}, err
	}
	if f.aliases, err = splitTag(sf.Tag, tagAlias); err != nil {
		return field{}, err
	}
	if f.codec, err = newDecoder(sf.Type, &f.c); err != nil {
		return field{}, err
	}
	if f.def != "" {
		// A bad default is a bug in the provider, not in the Service: catch
		// it when the type is first seen rather than on every sync.
		if err := f.decode(reflect.New(sf.Type).Elem(), f.def); err != nil {
			return field{}, fmt.Errorf("invalid default %q: %w", f.def, err)
		}
	}
	return f, nil
}

// splitTag returns the comma-separated list in tag name; an empty item is
// an error because it is always a typo.
func splitTag(tag reflect.StructTag, name string) ([]string, error) {
	v, ok := tag.Lookup(name)
	if !ok {
		return nil, nil
	}
	items := strings.Split(v, ",")
	for i, s := range items {
		items[i] = strings.TrimSpace(s)
		if items[i] == "" {
			return nil, fmt.Errorf("%s tag %q has an empty item", name, v)
		}
	}
	return items, nil
}

// isAbsolute reports whether a tag key is a full annotation key rather than
// one relative to the prefix.
func isAbsolute(key string) bool { return strings.Contains(key, "/") }

// fullKey resolves a tag key against prefix.
func fullKey(prefix, key string) string {
	if isAbsolute(key) {
		return key
	}
	return prefix + key
}

// lookup finds the field that claims annotation key under prefix.
func (ti *typeInfo) lookup(prefix, key string) (keyRef, bool) {
	if rest, ok := strings.CutPrefix(key, prefix); ok {
		if ref, ok := ti.relative[rest]; ok {
			return ref, true
		}
	}
	ref, ok := ti.absolute[key]
	return ref, ok
}

// checkPrefix validates the struct's keys once resolved against prefix: each
// must be a valid annotation key, and no two may collide (a relative key can
// collide with an absolute one only once the prefix is known). The result is
// cached per prefix; a provider uses one or two prefixes, never many.
func (ti *typeInfo) checkPrefix(prefix string) error {
	if m := ti.prefixes.Load(); m != nil {
		if err, ok := (*m)[prefix]; ok {
			return err
		}
	}
	ti.mu.Lock()
	defer ti.mu.Unlock()
	old := ti.prefixes.Load()
	if old != nil {
		if err, ok := (*old)[prefix]; ok {
			return err
		}
	}
	err := ti.validateKeys(prefix)
	m := map[string]error{}
	if old != nil {
		m = maps.Clone(*old)
	}
	m[prefix] = err
	ti.prefixes.Store(&m)
	return err
}

func (ti *typeInfo) validateKeys(prefix string) error {
	var errs []error
	owner := map[string]string{} // full key -> field path
	for _, f := range ti.fields {
		for _, k := range f.keys() {
			full := fullKey(prefix, k)
			// The API server's rule for annotation keys: a label key, in any case.
			for _, msg := range content.IsLabelKey(strings.ToLower(full)) {
				errs = append(errs, fmt.Errorf("annotations: %v field %s: key %q: %s", ti.typ, f.path, full, msg))
			}
			if prev, ok := owner[full]; ok && prev != f.path {
				errs = append(errs, fmt.Errorf("annotations: %v field %s: key %q is already used by field %s", ti.typ, f.path, full, prev))
			}
			owner[full] = f.path
		}
	}
	return errors.Join(errs...)
}

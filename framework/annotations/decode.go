package annotations

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Result reports which annotations Decode used and which it did not know.
type Result struct {
	// Unknown lists, sorted, the keys under the prefix that no field or
	// alias claims: usually a typo worth a Warning Event, never an error.
	Unknown []string
	// Set lists, sorted, the keys that were present and decoded.
	Set []string
}

// FieldError is one annotation whose value could not be decoded.
type FieldError struct {
	// Key is the annotation key as the user wrote it: the alias key when
	// the value came from an alias.
	Key   string
	Value string // the value as written
	Err   error  // what is wrong with it, e.g. "must be one of tcp, http, https"
}

func (e *FieldError) Error() string {
	return fmt.Sprintf("annotation %q: invalid value %s: %v", e.Key, Quote(e.Value), e.Err)
}

// quoteMax is the longest value Quote shows whole, in bytes.
const quoteMax = 64

// Quote returns s quoted (as %q does) for an error message or Event,
// shortened when long: the first bytes of it and its length, so that a
// 10 KB value is not echoed whole.
func Quote(s string) string {
	if len(s) <= quoteMax {
		return strconv.Quote(s)
	}
	cut := quoteMax - 16
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s... (%d bytes)", strconv.Quote(s[:cut]), len(s))
}

func (e *FieldError) Unwrap() error { return e.Err }

// match is the best key found so far for one field.
type match struct {
	key, value string
	rank       int
	found      bool
}

// Decode fills the struct pointed to by out from annotations.
//
// prefix is the provider's annotation prefix (for example
// "service.beta.kubernetes.io/do-loadbalancer-"): a tag key without "/" is
// relative to it, a key containing "/" is a full key. For each field:
//   - if its annotation (or, failing that, one of its aliases) is present,
//     the value is parsed;
//   - else, if the field already holds a non-zero value (defaults the caller
//     filled in, from cluster-wide configuration for example), it is kept;
//   - else the field gets its default tag, if any.
//
// A value that does not parse is reported and the field is filled as if the
// annotation were absent, so out is usable even when Decode fails.
//
// The error joins (errors.Join) one *FieldError per bad annotation, in field
// declaration order. Any other error is a bug in the struct or the call, such
// as an unsupported field type or an out that is not a pointer to a struct;
// it is returned before anything is decoded.
func Decode(annotations map[string]string, prefix string, out any) (Result, error) {
	rv := reflect.ValueOf(out)
	if rv.Kind() != reflect.Pointer || rv.IsNil() || rv.Elem().Kind() != reflect.Struct {
		return Result{}, fmt.Errorf("annotations: Decode needs a non-nil pointer to a struct, got %T", out)
	}
	ti, err := typeInfoFor(rv.Elem().Type())
	if err != nil {
		return Result{}, err
	}
	if err := ti.checkPrefix(prefix); err != nil {
		return Result{}, err
	}

	// Find each field's key in one pass over the annotations. Most structs
	// fit the stack buffer, so a sync allocates nothing here.
	var buf [64]match
	matches := buf[:]
	if len(ti.fields) > len(buf) {
		matches = make([]match, len(ti.fields))
	}
	var res Result
	found := 0
	for k, v := range annotations {
		ref, ok := ti.lookup(prefix, k)
		if !ok {
			if prefix != "" && strings.HasPrefix(k, prefix) {
				res.Unknown = append(res.Unknown, k)
			}
			continue
		}
		m := &matches[ref.field]
		if !m.found {
			found++
		}
		if !m.found || ref.rank < m.rank {
			*m = match{key: k, value: v, rank: ref.rank, found: true}
		}
	}
	if found > 0 {
		res.Set = make([]string, 0, found)
	}

	var errs []error
	s := rv.Elem()
	for i := range ti.fields {
		f := &ti.fields[i]
		dst := s.FieldByIndex(f.index)
		if m := &matches[i]; m.found {
			err := f.decode(dst, m.value)
			if err == nil {
				res.Set = append(res.Set, m.key)
				continue
			}
			errs = append(errs, &FieldError{Key: m.key, Value: m.value, Err: err})
		}
		if f.def != "" && dst.IsZero() {
			// Validated when the type was first seen, so this cannot fail.
			_ = f.decode(dst, f.def)
		}
	}
	slices.Sort(res.Unknown)
	slices.Sort(res.Set)
	return res, errors.Join(errs...)
}

package fuzzkit

import (
	"errors"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/ccmkit/ccmkit/framework/annotations"
)

// Annotations builds a Service's annotations from fuzzed text for the
// annotation struct C under prefix (see the package doc for the syntax).
// It fails t when C's tags are broken.
func Annotations[C any](t testing.TB, prefix string, text string) map[string]string {
	t.Helper()
	keys := annotationKeys[C](t, prefix)
	ann := map[string]string{}
	for _, p := range pairs(text) {
		key, ok := pick(p.name, keys)
		switch {
		case ok:
		case strings.Contains(p.name, "/"):
			key = p.name
		default:
			key = prefix + p.name
		}
		ann[key] = p.value
	}
	return ann
}

// annotationKeys lists every key of C under prefix, aliases included.
func annotationKeys[C any](t testing.TB, prefix string) []string {
	t.Helper()
	fields, err := annotations.Fields(prefix, new(C))
	if err != nil {
		t.Fatalf("annotation struct %T: %v", *new(C), err)
	}
	var keys []string
	for _, f := range fields {
		keys = append(keys, f.Key)
		keys = append(keys, f.Aliases...)
	}
	return keys
}

// Decode decodes ann under prefix into a config from newConfig (nil: the
// zero C), as the load-balancer pipeline does, and checks what every
// provider's users rely on:
//   - each error is a *annotations.FieldError for a key of ann, with the
//     value ann holds, and the message names that key;
//   - Result.Set and Result.Unknown are keys of ann;
//   - decoding again gives the same config, Result and error;
//   - a bad value loses nothing: the config equals the one decoded with
//     the failed fields' annotations left out (their defaults).
//
// It returns the decoded config and error for the provider's own checks.
func Decode[C any](t testing.TB, prefix string, newConfig func() *C, ann map[string]string) (*C, error) {
	t.Helper()
	if newConfig == nil {
		newConfig = func() *C { return new(C) }
	}
	cfg := newConfig()
	res, err := annotations.Decode(ann, prefix, cfg)
	failed := checkFieldErrors(t, ann, err)
	for _, k := range slices.Concat(res.Set, res.Unknown) {
		if _, ok := ann[k]; !ok {
			t.Errorf("Decode reports key %q, which is not among the annotations", k)
		}
	}

	again := newConfig()
	res2, err2 := annotations.Decode(ann, prefix, again)
	if !same(cfg, again) || !reflect.DeepEqual(res, res2) || errText(err) != errText(err2) {
		t.Errorf("Decode is not deterministic:\n%+v %+v %v\n%+v %+v %v", cfg, res, err, again, res2, err2)
	}

	if len(failed) > 0 {
		rest := maps.Clone(ann)
		for _, k := range fieldKeys[C](t, prefix, failed) {
			delete(rest, k)
		}
		without := newConfig()
		if _, err := annotations.Decode(rest, prefix, without); err != nil {
			t.Errorf("Decode without the failed keys %q: %v", failed, err)
		}
		if !same(cfg, without) {
			t.Errorf("a bad value changed the config: with %q\n%+v\nwithout\n%+v", failed, cfg, without)
		}
	}
	return cfg, err
}

// checkFieldErrors checks each error Decode joined and returns the keys
// that failed.
func checkFieldErrors(t testing.TB, ann map[string]string, err error) []string {
	t.Helper()
	var failed []string
	for _, e := range unjoin(err) {
		var fe *annotations.FieldError
		if !errors.As(e, &fe) {
			t.Fatalf("Decode error is not a *FieldError: %v", e)
		}
		if v, ok := ann[fe.Key]; !ok || v != fe.Value {
			t.Errorf("FieldError names key %q value %q; the annotations have %q (present %v)", fe.Key, fe.Value, v, ok)
		}
		if !strings.Contains(e.Error(), fe.Key) {
			t.Errorf("error %q does not name its annotation %q", e, fe.Key)
		}
		failed = append(failed, fe.Key)
	}
	return failed
}

// fieldKeys returns every key (primary and aliases) of the fields that
// claim any of keys.
func fieldKeys[C any](t testing.TB, prefix string, keys []string) []string {
	t.Helper()
	fields, err := annotations.Fields(prefix, new(C))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range fields {
		all := append([]string{f.Key}, f.Aliases...)
		if slices.ContainsFunc(all, func(k string) bool { return slices.Contains(keys, k) }) {
			out = append(out, all...)
		}
	}
	return out
}

// unjoin returns the errors errors.Join joined into err, or err alone.
func unjoin(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// errText is err's message, "" for nil.
func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// Stable calls check (a config's Validate, a driver's Service check) four
// times and fails t unless every call gives the same error text: a
// Warning Event whose words change from one sync to the next is emitted
// again on every sync. It returns the first call's error.
func Stable(t testing.TB, check func() error) error {
	t.Helper()
	err := check()
	for range 3 {
		if again := check(); errText(again) != errText(err) {
			t.Errorf("the same check gives different errors:\n%v\n%v", err, again)
			break
		}
	}
	return err
}

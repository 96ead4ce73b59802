// Package fuzzkit is what a provider's fuzz targets (and the framework's)
// share: it turns fuzzed text into the inputs of the parsers they fuzz (a
// Service's annotations for a provider's annotation struct, an environment
// for a config struct) and checks the properties every such parser owes
// its users beyond not panicking: an invalid annotation is an error naming
// its key, decoding is deterministic and a bad value loses nothing, a
// providerID round-trips, and no error carries a secret.
//
// Fuzzed text is read as lines "name=value". A name "#n" picks the n-th
// known key (annotation keys and their aliases, or environment variables)
// modulo their number, so the fuzzer reaches every key by mutating a
// number; any other name is used as written (for annotations, relative to
// the prefix unless it holds a "/"), so unknown keys are fuzzed too.
package fuzzkit

import (
	"reflect"
	"strconv"
	"strings"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// pair is one "name=value" line of fuzzed text.
type pair struct{ name, value string }

// pairs splits text into its "name=value" lines; a line without "=" is a
// name with an empty value.
func pairs(text string) []pair {
	var ps []pair
	for line := range strings.Lines(text) {
		line = strings.TrimSuffix(line, "\n")
		if line == "" {
			continue
		}
		name, value, _ := strings.Cut(line, "=")
		ps = append(ps, pair{name, value})
	}
	return ps
}

// pick resolves a "#n" name to one of known; ok is false for other names.
func pick(name string, known []string) (string, bool) {
	n, err := strconv.ParseUint(strings.TrimPrefix(name, "#"), 10, 64)
	if !strings.HasPrefix(name, "#") || err != nil || len(known) == 0 {
		return "", false
	}
	return known[n%uint64(len(known))], true
}

// same reports whether two decoded configs are equal, unexported fields
// included and NaN equal to NaN (a float setting may hold it).
func same(a, b any) bool {
	return cmp.Equal(a, b, cmp.Exporter(func(reflect.Type) bool { return true }), cmpopts.EquateNaNs())
}

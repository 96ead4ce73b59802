package fuzzkit

import "testing"

// FuzzConfig is the body of a provider's FuzzConfig for its config
// struct C, seeded with seeds: every fuzzed environment (Env) loads without
// a panic, the same way twice, with no error holding a secret (Load), nor
// the password of the URL any of urlSettings holds (URLPassword) outside
// the names of C's settings, which an error quotes whatever the password
// is (a password " SKELE" is no leak in "set SKELETON_TOKEN").
//
//	func FuzzConfig(f *testing.F) {
//		fuzzkit.FuzzConfig[Config](f, []string{"X_API_URL"}, "X_API_URL=https://api.example\nX_TOKEN=t")
//	}
func FuzzConfig[C any](f *testing.F, urlSettings []string, seeds ...string) {
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		env := Env[C](t, text)
		_, err := Load[C](t, env, "", nil)
		var passwords []string
		for _, name := range urlSettings {
			passwords = append(passwords, URLPassword(env[name]))
		}
		NoSecret(t, withoutNames[C](t, err), passwords...)
	})
}

// FuzzAnnotations is the frame of a provider's FuzzAnnotations for its
// annotation struct C under prefix: it seeds f with seeds (each with the
// Service shape 0), and runs check on the annotations each fuzzed text
// makes (Annotations) with a fuzzed Service shape (Service).
func FuzzAnnotations[C any](f *testing.F, prefix string, seeds []string, check func(t *testing.T, ann map[string]string, shape uint8)) {
	for _, s := range seeds {
		f.Add(s, uint8(0))
	}
	f.Fuzz(func(t *testing.T, text string, shape uint8) {
		check(t, Annotations[C](t, prefix, text), shape)
	})
}

// Valid decodes ann into a config from newConfig (Decode; nil: the zero
// C) and validates it (Stable), checking that each of Validate's errors
// names an annotation under prefix or one of keys (NamesAnnotation). It
// returns the config, and whether it decoded and validated without an
// error.
func Valid[C any, P interface {
	*C
	Validate() error
}](t testing.TB, prefix string, newConfig func() *C, ann map[string]string, keys ...string) (*C, bool) {
	t.Helper()
	cfg, err := Decode(t, prefix, newConfig, ann)
	verr := Stable(t, P(cfg).Validate)
	NamesAnnotation(t, verr, append([]string{prefix}, keys...)...)
	return cfg, err == nil && verr == nil
}

package fuzzkit

import (
	"errors"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/ccmkit/ccmkit/framework/config"
)

// Canary starts the value of every secret Env builds, so that NoSecret can
// tell a leaked secret, or any part of one, from other text.
const Canary = "k7Qz-SECRET-"

// Env builds an environment from fuzzed text for the config struct C (see
// the package doc for the syntax). The value of every secret variable
// (a config.Secret field's) gets Canary in front. X_FILE variables are left
// out: their value is a path, and a fuzzer must not read the machine's
// files. It fails t when C's tags are broken.
func Env[C any](t testing.TB, text string) map[string]string {
	t.Helper()
	fields, err := config.Fields(new(C))
	if err != nil {
		t.Fatalf("config struct %T: %v", *new(C), err)
	}
	var names []string
	secret := map[string]bool{}
	for _, f := range fields {
		if f.Env == "" {
			continue
		}
		names = append(names, f.Env)
		secret[f.Env] = f.Type == "secret"
	}
	env := map[string]string{}
	for _, p := range pairs(text) {
		name, ok := pick(p.name, names)
		if !ok {
			name = p.name
		}
		switch {
		case strings.HasSuffix(name, "_FILE"):
		case secret[name]:
			env[name] = Canary + p.value
		default: // Canary marks secrets only
			env[name] = strings.ReplaceAll(p.value, Canary, "")
		}
	}
	return env
}

// Load fills a C from env (and file, when not "", in format; nil means
// YAML) with config.Load, twice, and checks that the outcome is the same
// both times and that the error carries no secret (see NoSecret). It
// returns the config and the error for the caller's own checks.
func Load[C any](t testing.TB, env map[string]string, file string, format config.Format) (*C, error) {
	t.Helper()
	src := config.Source{File: file, Format: format, LookupEnv: func(k string) (string, bool) {
		v, ok := env[k]
		return v, ok
	}}
	cfg := new(C)
	err := config.Load(cfg, src)
	again := new(C)
	err2 := config.Load(again, src)
	if errText(err) != errText(err2) || !same(cfg, again) {
		t.Errorf("config.Load is not deterministic:\n%v\n%v", err, err2)
	}
	NoSecret(t, err, Canary)
	return cfg, err
}

// NoSecret fails t when err's message holds any of secrets (or Canary,
// which NoSecret always looks for). Secrets shorter than 6 bytes are not
// looked for: such a string turns up in ordinary text.
func NoSecret(t testing.TB, err error, secrets ...string) {
	t.Helper()
	if err == nil {
		return
	}
	msg := err.Error()
	for _, s := range append(secrets, Canary) {
		if len(s) >= 6 && strings.Contains(msg, s) {
			t.Errorf("error holds a secret (%q):\n%s", s, msg)
		}
	}
}

// withoutNames is err with every name of C's settings (environment
// variable, its _FILE variant, config-file key) cut from its message: the
// text an error quotes whatever the input was. nil stays nil.
func withoutNames[C any](t testing.TB, err error) error {
	t.Helper()
	if err == nil {
		return nil
	}
	fields, ferr := config.Fields(new(C))
	if ferr != nil {
		t.Fatalf("config struct %T: %v", *new(C), ferr)
	}
	var names []string
	for _, f := range fields {
		for _, n := range []string{f.Env + "_FILE", f.Env, f.FileKey} {
			if n != "" && n != "_FILE" {
				names = append(names, n)
			}
		}
	}
	// Longest first, so that X_FILE goes before X cuts it apart.
	slices.SortFunc(names, func(a, b string) int { return len(b) - len(a) })
	msg := err.Error()
	for _, n := range names {
		msg = strings.ReplaceAll(msg, n, "")
	}
	return errors.New(msg)
}

// URLPassword returns the password in raw's userinfo ("" when none), also
// from a URL url.Parse does not read userinfo from ("ops:pw@host" without
// "//", a path holding "//u:pw@h"): the text between the first ":" and the
// last "@" before the path.
// A password that the rest of the URL holds too ("//0:000000@000000")
// is "": an error that names the host is no leak.
func URLPassword(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.User != nil {
		p, _ := u.User.Password()
		c := *u
		c.User = nil
		return unlessIn(p, c.String())
	}
	rest := raw
	if _, after, ok := strings.Cut(raw, "//"); ok && !strings.Contains(raw[:len(raw)-len(after)], "@") {
		rest = after
	}
	rest, _, _ = strings.Cut(rest, "/")
	at := strings.LastIndex(rest, "@")
	if at < 0 {
		return ""
	}
	_, pw, _ := strings.Cut(rest[:at], ":")
	return unlessIn(pw, strings.Replace(raw, rest[:at+1], "", 1))
}

// unlessIn is secret, or "" when other (text that is no secret) holds it.
func unlessIn(secret, other string) string {
	if strings.Contains(other, secret) {
		return ""
	}
	return secret
}

// Package config fills a provider's config struct from the --cloud-config
// file and from environment variables.
//
// [Load] applies, in order: defaults from `default:"…"` tags, the config file
// (keys from `json:"…"` tags, decoded by a [Format], strict YAML unless told
// otherwise), environment variables from `env:"…"` tags, which win over the
// file, the `required:"true"` check, and finally the struct's own
// Validate() error method if it has one. It reports every problem at once,
// each naming the setting by its environment variable or file key, so an
// operator fixes a bad config in one round.
//
//	type Config struct {
//		Token  config.Secret `json:"token" env:"DO_ACCESS_TOKEN" required:"true" doc:"API token."`
//		Region string        `json:"region" env:"DO_REGION" default:"nyc3" doc:"Region slug."`
//		LB     LBConfig      `json:"loadBalancer"`
//	}
//
// Credentials belong in fields of type [Secret], which never print. A Secret
// field with `env:"X"` can also be given as X_FILE, the path of a file that
// is re-read when it changes, so rotated credentials apply without a restart.
//
// Load is the one place a provider reads environment variables for its
// configuration; [Fields] and [Markdown] document the same tags.
package config

import (
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"
)

// Source says where Load reads settings from.
type Source struct {
	File      string                      // path from --cloud-config; "" for no file
	Format    Format                      // syntax of File; nil means YAML
	LookupEnv func(string) (string, bool) // nil means os.LookupEnv; tests pass a map's lookup
}

// Load fills out, a pointer to a config struct, from src: defaults, then the
// file, then the environment, then the required check, then out.Validate()
// if out has that method and nothing failed before it.
//
// A default applies only to a field that is still zero, so values set in Go
// before Load are kept unless the file or the environment sets them. An
// environment variable set to the empty string counts as unset.
//
// Environment values parse as: bool (true/false, 1/0, yes/no, on/off),
// integers and floats in decimal, time.Duration as "30s", []string as a
// comma-separated list, Secret verbatim, and any encoding.TextUnmarshaler
// through its UnmarshalText. Nested struct values are walked; the fields of
// a pointer to a struct are not.
//
// The error joins every problem, one per line; none contains a Secret's
// value.
func Load(out any, src Source) error {
	rv := reflect.ValueOf(out)
	if rv.Kind() != reflect.Pointer || rv.IsNil() || rv.Elem().Kind() != reflect.Struct {
		return fmt.Errorf("config: Load wants a non-nil pointer to a struct, got %T", out)
	}
	fields, err := fieldsOf(rv.Elem().Type())
	if err != nil {
		return err
	}
	l := &loader{
		root:   rv.Elem(),
		fields: fields,
		src:    src,
		failed: make(map[int]bool),
	}
	if l.src.Format == nil {
		l.src.Format = YAML
	}
	if l.src.LookupEnv == nil {
		l.src.LookupEnv = os.LookupEnv
	}

	l.applyDefaults()
	l.readFile(out)
	l.applyEnv()
	l.checkRequired()
	if len(l.errs) == 0 {
		if v, ok := out.(interface{ Validate() error }); ok {
			if err := v.Validate(); err != nil {
				l.errs = append(l.errs, err)
			}
		}
	}
	return errors.Join(l.errs...)
}

type loader struct {
	root   reflect.Value
	fields []field
	src    Source
	errs   []error
	failed map[int]bool // fields, by position, with an error already reported
}

func (l *loader) fail(i int, err error) {
	l.failed[i] = true
	l.errs = append(l.errs, err)
}

func (l *loader) applyDefaults() {
	for i, f := range l.fields {
		v := l.root.FieldByIndex(f.index)
		if f.Default == "" || !v.IsZero() {
			continue
		}
		if err := setString(v, f.Default); err != nil { // checked by fieldsOf; kept for safety
			l.fail(i, fmt.Errorf("%s: default: %w", f.label(), err))
		}
	}
}

func (l *loader) readFile(out any) {
	if l.src.File == "" {
		return
	}
	data, err := os.ReadFile(l.src.File)
	if err != nil {
		l.errs = append(l.errs, fmt.Errorf("cloud config: %w", err))
		return
	}
	if err := l.src.Format.Decode(data, out); err != nil {
		for _, e := range flatten(err) {
			l.errs = append(l.errs, fmt.Errorf("cloud config %s: %w", l.src.File, e))
		}
	}
}

func (l *loader) applyEnv() {
	for i, f := range l.fields {
		if f.Env == "" {
			continue
		}
		v := l.root.FieldByIndex(f.index)
		value, set := l.lookup(f.Env)
		if f.typ == secretType {
			l.applySecretEnv(i, f, v, value, set)
			continue
		}
		if !set {
			continue
		}
		if err := setString(v, value); err != nil {
			l.fail(i, fmt.Errorf("%s: %w", f.Env, err))
		}
	}
}

// applySecretEnv sets a Secret from X or from the file named by X_FILE.
func (l *loader) applySecretEnv(i int, f field, v reflect.Value, value string, set bool) {
	fileVar := f.Env + "_FILE"
	path, fileSet := l.lookup(fileVar)
	switch {
	case set && fileSet:
		l.fail(i, fmt.Errorf("%s and %s are both set; set only one", f.Env, fileVar))
	case fileSet:
		s := secretFromEnvFile(path, fileVar)
		if _, err := s.Reveal(); err != nil { // fail at startup, not at first use
			l.fail(i, err)
			return
		}
		v.Set(reflect.ValueOf(s))
	case set:
		v.Set(reflect.ValueOf(NewSecret(value)))
	}
}

// lookup returns an environment variable; set to "" counts as unset.
func (l *loader) lookup(name string) (string, bool) {
	v, ok := l.src.LookupEnv(name)
	return v, ok && v != ""
}

func (l *loader) checkRequired() {
	for i, f := range l.fields {
		if !f.Required || l.failed[i] {
			continue
		}
		v := l.root.FieldByIndex(f.index)
		if f.typ == secretType {
			l.checkRequiredSecret(i, f, v.Interface().(Secret))
			continue
		}
		if v.IsZero() {
			l.fail(i, fmt.Errorf("%s: required (set %s)", f.label(), f.howToSet()))
		}
	}
}

func (l *loader) checkRequiredSecret(i int, f field, s Secret) {
	if s.IsZero() {
		l.fail(i, fmt.Errorf("%s: required (set %s)", f.label(), f.howToSet()))
		return
	}
	if !s.fromFile() {
		return
	}
	switch value, err := s.Reveal(); {
	case err != nil:
		l.fail(i, fmt.Errorf("%s: %w", f.label(), err))
	case value == "":
		l.fail(i, fmt.Errorf("%s: required, but secret file %s is empty", f.label(), s.src.path))
	}
}

// howToSet lists the ways to set f, for a required error.
func (f *field) howToSet() string {
	var ways []string
	if f.Env != "" {
		ways = append(ways, f.Env)
		if f.typ == secretType {
			ways = append(ways, f.Env+"_FILE")
		}
	}
	if f.FileKey != "" {
		ways = append(ways, fmt.Sprintf("%q in the cloud config", f.FileKey))
	}
	switch len(ways) {
	case 0:
		return "it in Go before Load"
	case 1:
		return ways[0]
	}
	return strings.Join(ways[:len(ways)-1], ", ") + " or " + ways[len(ways)-1]
}

// flatten returns the errors joined in err, or err itself. Only a join at the
// top is split: a wrapped join keeps its wrapping context whole.
func flatten(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

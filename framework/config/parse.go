package config

import (
	"encoding"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"
)

var (
	secretType          = reflect.TypeFor[Secret]()
	durationType        = reflect.TypeFor[time.Duration]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

func isTextUnmarshaler(t reflect.Type) bool {
	return t.Implements(textUnmarshalerType) || reflect.PointerTo(t).Implements(textUnmarshalerType)
}

// parsable reports whether setString supports t.
func parsable(t reflect.Type) bool {
	switch {
	case t == secretType, t == durationType, isTextUnmarshaler(t):
		return true
	}
	switch t.Kind() {
	case reflect.String, reflect.Bool,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return true
	case reflect.Slice:
		return t.Elem().Kind() == reflect.String
	case reflect.Pointer:
		return t.Elem().Kind() != reflect.Pointer && parsable(t.Elem())
	}
	return false
}

// typeName names t for documentation and error messages.
func typeName(t reflect.Type) string {
	switch {
	case t == secretType:
		return "secret"
	case t == durationType:
		return "duration"
	case t.Kind() == reflect.Pointer:
		return typeName(t.Elem())
	case t.Name() != "" && (isTextUnmarshaler(t) || t.Kind() == reflect.Map || t.Kind() == reflect.Struct):
		// A type of its own by its name, without its package's: a
		// provider may declare its configuration in an internal package.
		return t.Name()
	case isTextUnmarshaler(t):
		return t.String()
	}
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Slice:
		if t.Elem().Kind() == reflect.String {
			return "[]string"
		}
	case reflect.Bool, reflect.Float32, reflect.Float64,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return t.Kind().String()
	}
	return t.String()
}

// setString parses s, an environment variable's value or a default tag, into
// the addressable v. The error describes the problem and quotes s, except for
// a Secret, which cannot fail.
func setString(v reflect.Value, s string) error {
	t := v.Type()
	switch {
	case t == secretType:
		v.Set(reflect.ValueOf(NewSecret(s)))
		return nil
	case t == durationType:
		d, err := time.ParseDuration(strings.TrimSpace(s))
		if err != nil {
			return fmt.Errorf("invalid duration %q (want a number with a unit, such as 30s or 5m)", s)
		}
		v.SetInt(int64(d))
		return nil
	case t.Kind() == reflect.Pointer:
		p := reflect.New(t.Elem())
		if err := setString(p.Elem(), s); err != nil {
			return err
		}
		v.Set(p)
		return nil
	case isTextUnmarshaler(t):
		if err := v.Addr().Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(s)); err != nil {
			return fmt.Errorf("invalid %s %q: %w", t, s, err)
		}
		return nil
	}

	switch t.Kind() {
	case reflect.String:
		v.SetString(s)
	case reflect.Bool:
		b, err := parseBool(s)
		if err != nil {
			return err
		}
		v.SetBool(b)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, err := strconv.ParseInt(strings.TrimSpace(s), 10, t.Bits())
		if err != nil {
			return numError(t, s, err)
		}
		v.SetInt(n)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n, err := strconv.ParseUint(strings.TrimSpace(s), 10, t.Bits())
		if err != nil {
			return numError(t, s, err)
		}
		v.SetUint(n)
	case reflect.Float32, reflect.Float64:
		f, err := strconv.ParseFloat(strings.TrimSpace(s), t.Bits())
		if err != nil {
			return numError(t, s, err)
		}
		v.SetFloat(f)
	case reflect.Slice:
		list := splitList(s)
		if len(list) == 0 {
			v.SetZero()
			return nil
		}
		out := reflect.MakeSlice(t, len(list), len(list))
		for i, e := range list {
			out.Index(i).SetString(e)
		}
		v.Set(out)
	default:
		return fmt.Errorf("unsupported type %s", t)
	}
	return nil
}

func parseBool(s string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true", "t", "1", "yes", "y", "on":
		return true, nil
	case "false", "f", "0", "no", "n", "off":
		return false, nil
	}
	return false, fmt.Errorf("invalid bool %q (want true or false)", s)
}

func numError(t reflect.Type, s string, err error) error {
	if errors.Is(err, strconv.ErrRange) {
		return fmt.Errorf("invalid %s %q: out of range", typeName(t), s)
	}
	return fmt.Errorf("invalid %s %q", typeName(t), s)
}

// splitList splits a comma-separated list, trimming space around elements
// and dropping empty ones.
func splitList(s string) []string {
	var out []string
	for e := range strings.SplitSeq(s, ",") {
		if e = strings.TrimSpace(e); e != "" {
			out = append(out, e)
		}
	}
	return out
}

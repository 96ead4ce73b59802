package config

import (
	"encoding"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"
)

// SecretData returns, by key, the values of the fields of v (a config
// struct or a pointer to one, as Load filled it) tagged `secret:"<key>"`
// that are set: a Secret's revealed value (its file read), any other field
// written as its environment variable would be. Unset (zero) fields are
// left out. It is what make-secret prints; errors name the setting, never a
// value.
//
//	Token config.Secret `env:"DO_ACCESS_TOKEN" secret:"access-token"`
//
// A key must be a valid Secret key (letters, digits, '-', '_', '.') and
// name one field.
func SecretData(v any) (map[string][]byte, error) {
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Pointer && !rv.IsNil() {
		rv = rv.Elem()
	}
	if rv.Kind() != reflect.Struct {
		return nil, fmt.Errorf("config: SecretData wants a struct or a non-nil pointer to one, got %T", v)
	}
	fields, err := fieldsOf(rv.Type())
	if err != nil {
		return nil, err
	}
	data := map[string][]byte{}
	for _, f := range fields {
		if f.SecretKey == "" {
			continue
		}
		fv := rv.FieldByIndex(f.index)
		if fv.Kind() == reflect.Pointer {
			if fv.IsNil() {
				continue
			}
			fv = fv.Elem()
		}
		if fv.IsZero() {
			continue
		}
		s, err := formatValue(fv)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.label(), err)
		}
		if s != "" {
			data[f.SecretKey] = []byte(s)
		}
	}
	return data, nil
}

// formatValue writes v the way setString reads it.
func formatValue(v reflect.Value) (string, error) {
	t := v.Type()
	switch t {
	case secretType:
		s := v.Interface().(Secret)
		return s.Reveal()
	case durationType:
		return v.Interface().(time.Duration).String(), nil
	}
	if m, ok := v.Interface().(encoding.TextMarshaler); ok {
		b, err := m.MarshalText()
		return string(b), err
	}
	switch t.Kind() {
	case reflect.String:
		return v.String(), nil
	case reflect.Bool:
		return strconv.FormatBool(v.Bool()), nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(v.Int(), 10), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return strconv.FormatUint(v.Uint(), 10), nil
	case reflect.Float32, reflect.Float64:
		return strconv.FormatFloat(v.Float(), 'g', -1, t.Bits()), nil
	case reflect.Slice:
		if t.Elem().Kind() == reflect.String {
			items := make([]string, v.Len())
			for i := range items {
				items[i] = v.Index(i).String()
			}
			return strings.Join(items, ","), nil
		}
	}
	return "", fmt.Errorf("a %s cannot be stored in a Secret", t)
}

// validSecretKey reports whether k is a valid key of a Kubernetes Secret's
// data.
func validSecretKey(k string) bool { return len(validation.IsConfigMapKey(k)) == 0 }

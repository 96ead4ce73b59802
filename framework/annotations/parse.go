package annotations

import (
	"encoding"
	"errors"
	"fmt"
	"math"
	"net/netip"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
)

// decodeFunc parses s into dst. It leaves dst untouched on error.
type decodeFunc func(dst reflect.Value, s string) error

// codec is how one field type is decoded and documented.
type codec struct {
	decode   decodeFunc
	typeName string    // for docs: "integer", "list of strings", ...
	notes    noteKinds // which value syntaxes the docs must explain
}

// constraints are the tags that restrict a field's values.
type constraints struct {
	enum           []string
	min, max, unit string
}

// noteKinds records the value syntaxes a field uses, so that Markdown
// explains only those the struct needs.
type noteKinds uint8

const (
	noteBool noteKinds = 1 << iota
	noteList
	noteDuration
	noteCIDR
	noteMap
	noteEnum
)

var (
	durationType        = reflect.TypeFor[time.Duration]()
	prefixType          = reflect.TypeFor[netip.Prefix]()
	stringMapType       = reflect.TypeFor[map[string]string]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()

	errBool = errors.New("must be one of true, false, yes, no, 1, 0 (case-insensitive)")
	errCIDR = errors.New("must be a CIDR such as 10.0.0.0/8 or 2001:db8::/32, or a single IP address")

	errUnsupported = errors.New("unsupported type")
)

var units = map[string]struct {
	size time.Duration
	word string
}{
	"s":  {time.Second, "seconds"},
	"ms": {time.Millisecond, "milliseconds"},
}

// newDecoder returns the codec for a field of type t: a scalar, a pointer to
// a scalar, a comma-separated list of scalars, or a key=value map.
func newDecoder(t reflect.Type, c *constraints) (codec, error) {
	var cd codec
	var err error
	switch {
	case t.Kind() == reflect.Pointer:
		if cd, err = newScalarDecoder(t.Elem(), c); err == nil {
			cd.decode = pointerDecoder(t.Elem(), cd.decode)
		}
	case t.Kind() == reflect.Slice && !isText(t):
		if cd, err = newScalarDecoder(t.Elem(), c); err == nil {
			cd = codec{decode: listDecoder(t, cd.decode), typeName: "list of " + plural(cd.typeName), notes: cd.notes | noteList}
		}
	case t.Kind() == reflect.Map && !isText(t):
		if !stringMapType.ConvertibleTo(t) {
			err = errUnsupported
		} else if err = c.only(t); err == nil {
			cd = codec{decode: mapDecoder(t), typeName: "map", notes: noteMap}
		}
	default:
		cd, err = newScalarDecoder(t, c)
	}
	if errors.Is(err, errUnsupported) {
		// Name the field's type, not the element type that failed.
		return codec{}, fmt.Errorf("%w %v", errUnsupported, t)
	}
	return cd, err
}

func newScalarDecoder(t reflect.Type, c *constraints) (codec, error) {
	switch {
	case t == durationType:
		return durationDecoder(c)
	case t == prefixType:
		return codec{decode: decodePrefix, typeName: "CIDR", notes: noteCIDR}, c.only(t)
	case isText(t):
		return codec{decode: textDecoder(t), typeName: "string"}, c.only(t)
	}
	switch t.Kind() {
	case reflect.String:
		return stringDecoder(t, c)
	case reflect.Bool:
		return codec{decode: decodeBool, typeName: "bool", notes: noteBool}, c.only(t)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return intDecoder(t, c)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return uintDecoder(t, c)
	case reflect.Float32, reflect.Float64:
		return floatDecoder(t, c)
	}
	return codec{}, errUnsupported
}

// isText reports whether a field of type t can decode itself.
func isText(t reflect.Type) bool { return reflect.PointerTo(t).Implements(textUnmarshalerType) }

// plural turns a type name into its plural: "integer" -> "integers",
// "duration (seconds)" -> "durations (seconds)".
func plural(name string) string {
	word, rest, _ := strings.Cut(name, " ")
	if rest != "" {
		rest = " " + rest
	}
	return word + "s" + rest
}

// only rejects constraint tags that type t cannot honour.
func (c *constraints) only(t reflect.Type, allowed ...string) error {
	for _, tag := range []struct {
		name string
		set  bool
	}{{tagEnum, c.enum != nil}, {tagMin, c.min != ""}, {tagMax, c.max != ""}, {tagUnit, c.unit != ""}} {
		if tag.set && !slices.Contains(allowed, tag.name) {
			return fmt.Errorf("%s tag is not supported for type %v", tag.name, t)
		}
	}
	return nil
}

// mustBe builds the message for a value outside "what", optionally bounded.
func mustBe(what, lo, hi string) error {
	switch {
	case lo != "" && hi != "":
		return fmt.Errorf("must be %s between %s and %s", what, lo, hi)
	case lo != "":
		return fmt.Errorf("must be %s >= %s", what, lo)
	case hi != "":
		return fmt.Errorf("must be %s <= %s", what, hi)
	}
	return fmt.Errorf("must be %s", what)
}

func stringDecoder(t reflect.Type, c *constraints) (codec, error) {
	if err := c.only(t, tagEnum); err != nil {
		return codec{}, err
	}
	if c.enum == nil {
		return codec{decode: func(dst reflect.Value, s string) error {
			dst.SetString(s)
			return nil
		}, typeName: "string"}, nil
	}
	enum := c.enum
	for i, e := range enum {
		for _, prev := range enum[:i] {
			if strings.EqualFold(e, prev) {
				return codec{}, fmt.Errorf("enum tag lists %q twice", e)
			}
		}
	}
	invalid := fmt.Errorf("must be one of %s", strings.Join(enum, ", "))
	return codec{decode: func(dst reflect.Value, s string) error {
		s = strings.TrimSpace(s)
		for _, e := range enum {
			if strings.EqualFold(s, e) {
				dst.SetString(e) // normalised to the enum's spelling
				return nil
			}
		}
		return invalid
	}, typeName: "string", notes: noteEnum}, nil
}

func decodeBool(dst reflect.Value, s string) error {
	switch s = strings.TrimSpace(s); {
	case s == "1" || strings.EqualFold(s, "true") || strings.EqualFold(s, "yes"):
		dst.SetBool(true)
	case s == "0" || strings.EqualFold(s, "false") || strings.EqualFold(s, "no"):
		dst.SetBool(false)
	default:
		return errBool
	}
	return nil
}

func intDecoder(t reflect.Type, c *constraints) (codec, error) {
	if err := c.only(t, tagMin, tagMax); err != nil {
		return codec{}, err
	}
	bits := t.Bits()
	lo, hi := int64(math.MinInt64)>>(64-bits), int64(math.MaxInt64)>>(64-bits)
	var loText, hiText string
	if bits < 64 {
		loText, hiText = strconv.FormatInt(lo, 10), strconv.FormatInt(hi, 10)
	}
	parse := func(s string) (int64, error) { return strconv.ParseInt(strings.TrimSpace(s), 10, bits) }
	if err := bound(c, parse, &lo, &hi, &loText, &hiText); err != nil {
		return codec{}, err
	}
	invalid := mustBe("an integer", loText, hiText)
	return codec{decode: func(dst reflect.Value, s string) error {
		v, err := parse(s)
		if err != nil || v < lo || v > hi {
			return invalid
		}
		dst.SetInt(v)
		return nil
	}, typeName: "integer"}, nil
}

func uintDecoder(t reflect.Type, c *constraints) (codec, error) {
	if err := c.only(t, tagMin, tagMax); err != nil {
		return codec{}, err
	}
	bits := t.Bits()
	lo, hi := uint64(0), uint64(math.MaxUint64)>>(64-bits)
	loText, hiText := "0", ""
	if bits < 64 {
		hiText = strconv.FormatUint(hi, 10)
	}
	parse := func(s string) (uint64, error) { return strconv.ParseUint(strings.TrimSpace(s), 10, bits) }
	if err := bound(c, parse, &lo, &hi, &loText, &hiText); err != nil {
		return codec{}, err
	}
	invalid := mustBe("an integer", loText, hiText)
	return codec{decode: func(dst reflect.Value, s string) error {
		v, err := parse(s)
		if err != nil || v < lo || v > hi {
			return invalid
		}
		dst.SetUint(v)
		return nil
	}, typeName: "integer"}, nil
}

func floatDecoder(t reflect.Type, c *constraints) (codec, error) {
	if err := c.only(t, tagMin, tagMax); err != nil {
		return codec{}, err
	}
	parse := func(s string) (float64, error) {
		v, err := strconv.ParseFloat(strings.TrimSpace(s), t.Bits())
		if err == nil && (math.IsNaN(v) || math.IsInf(v, 0)) {
			err = errors.New("not a finite number")
		}
		return v, err
	}
	lo, hi := math.Inf(-1), math.Inf(1)
	var loText, hiText string
	if err := bound(c, parse, &lo, &hi, &loText, &hiText); err != nil {
		return codec{}, err
	}
	invalid := mustBe("a number", loText, hiText)
	return codec{decode: func(dst reflect.Value, s string) error {
		v, err := parse(s)
		if err != nil || v < lo || v > hi {
			return invalid
		}
		dst.SetFloat(v)
		return nil
	}, typeName: "number"}, nil
}

// durationDecoder accepts Go duration strings ("90s", "1m30s") and, with a
// unit tag, bare whole numbers in that unit ("90").
func durationDecoder(c *constraints) (codec, error) {
	if err := c.only(durationType, tagMin, tagMax, tagUnit); err != nil {
		return codec{}, err
	}
	cd := codec{typeName: "duration", notes: noteDuration}
	var unit time.Duration
	what := `a duration such as "30s"`
	if c.unit != "" {
		u, ok := units[c.unit]
		if !ok {
			return codec{}, fmt.Errorf(`unit tag %q: must be "s" or "ms"`, c.unit)
		}
		unit, what = u.size, "a whole number of "+u.word
		cd.typeName += " (" + u.word + ")"
	}
	parse := func(s string) (time.Duration, error) {
		s = strings.TrimSpace(s)
		if unit != 0 && isDigits(s) {
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil || n > math.MaxInt64/int64(unit) {
				return 0, errors.New("out of range")
			}
			return time.Duration(n) * unit, nil
		}
		return time.ParseDuration(s)
	}
	lo, hi := time.Duration(math.MinInt64), time.Duration(math.MaxInt64)
	var loText, hiText string
	if err := bound(c, parse, &lo, &hi, &loText, &hiText); err != nil {
		return codec{}, err
	}
	switch {
	case unit != 0:
		// Speak the user's unit: "between 1 and 300", even for min:"1s".
		loText, hiText = inUnit(lo, unit, loText), inUnit(hi, unit, hiText)
	case loText != "" || hiText != "":
		what = "a duration"
	}
	invalid := mustBe(what, loText, hiText)
	cd.decode = func(dst reflect.Value, s string) error {
		d, err := parse(s)
		if err != nil || d < lo || d > hi {
			return invalid
		}
		dst.SetInt(int64(d))
		return nil
	}
	return cd, nil
}

// inUnit formats a bound given as text in unit when it is a whole number of
// them.
func inUnit(d, unit time.Duration, text string) string {
	if text == "" || d%unit != 0 {
		return text
	}
	return strconv.FormatInt(int64(d/unit), 10)
}

func isDigits(s string) bool {
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// bound applies the min and max tags, parsed like a value, to lo and hi, and
// records their spelling for error messages.
func bound[T int64 | uint64 | float64 | time.Duration](c *constraints, parse func(string) (T, error), lo, hi *T, loText, hiText *string) error {
	if c.min != "" {
		v, err := parse(c.min)
		if err != nil {
			return fmt.Errorf("min tag %q: %w", c.min, err)
		}
		*lo, *loText = v, c.min
	}
	if c.max != "" {
		v, err := parse(c.max)
		if err != nil {
			return fmt.Errorf("max tag %q: %w", c.max, err)
		}
		*hi, *hiText = v, c.max
	}
	if *lo > *hi {
		return fmt.Errorf("min %s is greater than max %s", c.min, c.max)
	}
	return nil
}

// parsePrefix parses a CIDR, or a single IP as a /32 or /128. The address
// is masked, as for Service.spec.loadBalancerSourceRanges: "10.1.2.3/8" is
// 10.0.0.0/8.
func parsePrefix(s string) (netip.Prefix, error) {
	s = strings.TrimSpace(s)
	if strings.Contains(s, "/") {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return netip.Prefix{}, errCIDR
		}
		return p.Masked(), nil
	}
	a, err := netip.ParseAddr(s)
	if err != nil || a.Zone() != "" {
		return netip.Prefix{}, errCIDR
	}
	return netip.PrefixFrom(a, a.BitLen()), nil
}

func decodePrefix(dst reflect.Value, s string) error {
	p, err := parsePrefix(s)
	if err != nil {
		return err
	}
	*dst.Addr().Interface().(*netip.Prefix) = p
	return nil
}

func textDecoder(t reflect.Type) decodeFunc {
	return func(dst reflect.Value, s string) error {
		v := reflect.New(t)
		if err := v.Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(s)); err != nil {
			return err
		}
		dst.Set(v.Elem())
		return nil
	}
}

func pointerDecoder(elem reflect.Type, decode decodeFunc) decodeFunc {
	return func(dst reflect.Value, s string) error {
		v := reflect.New(elem)
		if err := decode(v.Elem(), s); err != nil {
			return err
		}
		dst.Set(v)
		return nil
	}
}

// listDecoder decodes a comma-separated list; items are trimmed and empty
// items dropped, so "80, 443," is [80 443] and "" is an empty (nil) list.
func listDecoder(t reflect.Type, decode decodeFunc) decodeFunc {
	return func(dst reflect.Value, s string) error {
		n := 0
		for rest := s; rest != ""; {
			var item string
			if item, rest = cutItem(rest); item != "" {
				n++
			}
		}
		if n == 0 {
			dst.SetZero()
			return nil
		}
		list := reflect.MakeSlice(t, n, n)
		i := 0
		for rest := s; rest != ""; {
			var item string
			if item, rest = cutItem(rest); item == "" {
				continue
			}
			if err := decode(list.Index(i), item); err != nil {
				return fmt.Errorf("item %s: %w", Quote(item), err)
			}
			i++
		}
		dst.Set(list)
		return nil
	}
}

// cutItem returns the first comma-separated item of s, trimmed, and the
// rest of s. (strings.SplitSeq would allocate on every call.)
func cutItem(s string) (item, rest string) {
	item, rest, _ = strings.Cut(s, ",")
	return strings.TrimSpace(item), rest
}

// mapDecoder decodes "k=v,k2=v2". Keys must be non-empty and unique; values
// may be empty and may contain "=".
func mapDecoder(t reflect.Type) decodeFunc {
	return func(dst reflect.Value, s string) error {
		var m map[string]string
		for rest := s; rest != ""; {
			var item string
			if item, rest = cutItem(rest); item == "" {
				continue
			}
			k, v, ok := strings.Cut(item, "=")
			k = strings.TrimSpace(k)
			if !ok || k == "" {
				return fmt.Errorf("item %s: must be key=value", Quote(item))
			}
			if _, dup := m[k]; dup {
				return fmt.Errorf("key %s is given twice", Quote(k))
			}
			if m == nil {
				m = map[string]string{}
			}
			m[k] = strings.TrimSpace(v)
		}
		if m == nil {
			dst.SetZero()
			return nil
		}
		dst.Set(reflect.ValueOf(m).Convert(t))
		return nil
	}
}

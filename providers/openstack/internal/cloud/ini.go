package cloud

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	"gopkg.in/gcfg.v1/scanner"
	"gopkg.in/gcfg.v1/token"
	"gopkg.in/gcfg.v1/types"

	"github.com/ccmkit/ccmkit/framework/config"
)

// INI reads OCCM's cloud.conf: the git-config style INI that OCCM parses
// with gopkg.in/gcfg.v1. The same library's scanner tokenizes the file
// (comments, quoting, escapes, continuation lines), and the values are
// matched as gcfg matches them: section and key names case-insensitively, a
// key with no "= value" meaning true for a bool, a repeated key appending to
// a list (and a blank one clearing it), integers in decimal or 0x hex.
//
// Where gcfg (and so OCCM) silently ignores unknown sections and keys and
// stops at the first bad value, INI reports every unknown section, unknown
// key and bad value at once, each naming its section, key and line, and
// never quotes the value of a secret. Keys OCCM once had and no longer
// reads (use-octavia) are accepted and noted in the log, and so is the
// [BlockStorage] section, which the CCM does not read and the CSI driver
// does (cinder-csi-plugin's keys, and the in-tree provider's).
//
// Sections and keys are the json tags of the Config fields.
var INI config.Format = iniFormat{}

type iniFormat struct{}

func (iniFormat) Name() string { return "ini" }

// ignoredSections are sections of the in-tree OpenStack provider's
// cloud.conf that OCCM no longer reads, so files shared with it still load.
var ignoredSections = map[string]string{}

// csiSections are sections the CCM decodes (and checks) for the CSI driver
// but does not use itself: each is noted once, as an ignored section is.
var csiSections = map[string]string{
	"blockstorage": "[BlockStorage] is read by the Cinder CSI driver, not by the cloud-controller-manager",
}

// obsoleteKeys are keys OCCM documented once and no longer reads, by
// "<section> <key>" in lower case.
var obsoleteKeys = map[string]string{
	"loadbalancer use-octavia": "Octavia is always used",
}

var (
	secretType   = reflect.TypeFor[config.Secret]()
	durationType = reflect.TypeFor[time.Duration]()
)

func (iniFormat) Decode(data []byte, out any) error {
	cfg, ok := out.(*Config)
	if !ok {
		return fmt.Errorf("the ini format decodes an openstack.Config, not %T", out)
	}
	entries, errs := scanINI(data)
	d := iniDecoder{cfg: cfg, errs: errs}
	for _, e := range entries {
		d.apply(e)
	}
	cfg.notes = append(cfg.notes, d.notes...)
	return errors.Join(d.errs...)
}

// iniEntry is one section header (name == "") or variable of the file.
type iniEntry struct {
	line                int
	section, subsection string
	name                string
	blank               bool // a variable without "= value"
	value               string
}

// scanINI splits data into entries with the gcfg scanner, the way gcfg's
// own reader does, collecting every syntax error rather than stopping.
func scanINI(data []byte) ([]iniEntry, []error) {
	data = bytes.TrimPrefix(data, []byte("\ufeff")) // as gcfg.ReadFileInto
	fset := token.NewFileSet()
	file := fset.AddFile("", fset.Base(), len(data))
	var errs []error
	var s scanner.Scanner
	s.Init(file, data, func(p token.Position, msg string) {
		errs = append(errs, fmt.Errorf("line %d: %s", p.Line, msg))
	}, 0)

	var out []iniEntry
	sect, sub := "", ""
	pos, tok, lit := s.Scan()
	line := func() int { return fset.Position(pos).Line }
	skipLine := func() { // resynchronise at the next line
		for tok != token.EOL && tok != token.EOF {
			pos, tok, lit = s.Scan()
		}
	}
	syntax := func(msg string) {
		errs = append(errs, fmt.Errorf("line %d: %s", line(), msg))
		skipLine()
	}
	for tok != token.EOF {
		switch tok {
		case token.EOL, token.COMMENT:
			pos, tok, lit = s.Scan()
		case token.LBRACK:
			start := line()
			if pos, tok, lit = s.Scan(); tok != token.IDENT {
				syntax("expected a section name after [")
				continue
			}
			sect, sub = lit, ""
			if pos, tok, lit = s.Scan(); tok == token.STRING {
				v, err := unquote(lit)
				if err != nil || v == "" {
					syntax("invalid subsection name")
					continue
				}
				sub = v
				pos, tok, lit = s.Scan()
			}
			if tok != token.RBRACK {
				syntax("expected ] after the section name")
				continue
			}
			if pos, tok, lit = s.Scan(); tok != token.EOL && tok != token.EOF && tok != token.COMMENT {
				syntax("expected the end of the line after ]")
				continue
			}
			out = append(out, iniEntry{line: start, section: sect, subsection: sub})
		case token.IDENT:
			e := iniEntry{line: line(), section: sect, subsection: sub, name: lit}
			if sect == "" {
				syntax(fmt.Sprintf("%s: expected a [section] header first", lit))
				continue
			}
			pos, tok, lit = s.Scan()
			if tok == token.EOL || tok == token.EOF || tok == token.COMMENT {
				e.blank = true
				out = append(out, e)
				continue
			}
			if tok != token.ASSIGN {
				syntax(fmt.Sprintf("%s: expected =", e.name))
				continue
			}
			before := len(errs)
			if pos, tok, lit = s.Scan(); tok != token.STRING {
				syntax(fmt.Sprintf("%s: expected a value after =", e.name))
				continue
			}
			v, err := unquote(lit)
			if len(errs) > before { // the scanner reported the bad literal
				skipLine()
				continue
			}
			if err != nil {
				syntax(fmt.Sprintf("%s: %v", e.name, err)) // never quotes the value
				continue
			}
			e.value = v
			if pos, tok, lit = s.Scan(); tok != token.EOL && tok != token.EOF && tok != token.COMMENT {
				syntax(fmt.Sprintf("%s: expected the end of the line after the value", e.name))
				continue
			}
			out = append(out, e)
		default:
			syntax("expected a [section] header or a key = value line")
		}
	}
	return out, errs
}

// unquote removes gcfg's quotes and escapes from a scanned value, as gcfg
// does; the scanner has already rejected most malformed literals.
func unquote(s string) (string, error) {
	var b strings.Builder
	quoted, escaped := false, false
	for _, c := range s {
		if escaped {
			escaped = false
			switch c {
			case '\\', '"':
				b.WriteRune(c)
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case '\n':
				if quoted {
					return "", errors.New("invalid escape sequence")
				}
			default:
				return "", errors.New("invalid escape sequence")
			}
			continue
		}
		switch c {
		case '"':
			quoted = !quoted
		case '\\':
			escaped = true
		default:
			b.WriteRune(c)
		}
	}
	if quoted {
		return "", errors.New("missing closing quote")
	}
	if escaped {
		return "", errors.New("invalid escape sequence")
	}
	return b.String(), nil
}

// iniDecoder applies entries to a Config, collecting every problem.
type iniDecoder struct {
	cfg   *Config
	errs  []error
	notes []string
	// reported remembers the sections reported (unknown, or noted), to
	// report each once.
	reported map[string]bool
}

// once reports whether what (a section name, any case) is reported for
// the first time, and remembers it.
func (d *iniDecoder) once(what string) bool {
	key := strings.ToLower(what)
	if d.reported[key] {
		return false
	}
	if d.reported == nil {
		d.reported = map[string]bool{}
	}
	d.reported[key] = true
	return true
}

func (d *iniDecoder) errorf(e iniEntry, format string, args ...any) {
	d.errs = append(d.errs, fmt.Errorf("%s (line %d)", fmt.Sprintf(format, args...), e.line))
}

// where names an entry's section (and key) as an operator would write it.
func where(e iniEntry) string {
	s := "[" + e.section
	if e.subsection != "" {
		s += fmt.Sprintf(" %q", e.subsection)
	}
	s += "]"
	if e.name != "" {
		s += " " + e.name
	}
	return s
}

func (d *iniDecoder) apply(e iniEntry) {
	sect, ok := fieldByKey(reflect.ValueOf(d.cfg).Elem(), e.section)
	if !ok {
		if d.once(e.section) {
			if why, ignored := ignoredSections[strings.ToLower(e.section)]; ignored {
				d.notes = append(d.notes, fmt.Sprintf("[%s] ignored: %s", e.section, why))
			} else {
				d.errorf(e, "unknown section [%s]", e.section)
			}
		}
		return
	}
	if why, ok := csiSections[strings.ToLower(e.section)]; ok && d.cfg.use == UseCCM && d.once("csi "+e.section) {
		d.notes = append(d.notes, fmt.Sprintf("[%s] ignored: %s", e.section, why))
	}
	switch {
	case sect.Kind() == reflect.Map:
		if e.subsection == "" {
			d.errorf(e, "[%s] needs a name: [%s \"<name>\"]", e.section, e.section)
			return
		}
		if sect.IsNil() {
			sect.Set(reflect.MakeMap(sect.Type()))
		}
		key := reflect.ValueOf(e.subsection)
		p := sect.MapIndex(key)
		if !p.IsValid() {
			p = reflect.New(sect.Type().Elem().Elem())
			sect.SetMapIndex(key, p)
		}
		sect = p.Elem()
	case e.subsection != "":
		d.errorf(e, "[%s] takes no name, got [%s %q]", e.section, e.section, e.subsection)
		return
	}
	if e.name == "" {
		return // a section header
	}
	field, ok := fieldByKey(sect, e.name)
	if !ok {
		d.errorf(e, "%s: unknown key", where(e))
		return
	}
	if why, obsolete := obsoleteKeys[strings.ToLower(e.section+" "+e.name)]; obsolete {
		d.notes = append(d.notes, fmt.Sprintf("%s is obsolete and ignored: %s", where(e), why))
	}
	if err := setINIValue(field, e); err != nil {
		d.errorf(e, "%s: %v", where(e), err)
	}
}

// fieldByKey returns the field of struct v whose json tag is key, compared
// case-insensitively as gcfg does.
func fieldByKey(v reflect.Value, key string) (reflect.Value, bool) {
	t := v.Type()
	for i := range t.NumField() {
		sf := t.Field(i)
		name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
		if sf.IsExported() && name != "" && name != "-" && strings.EqualFold(name, key) {
			return v.Field(i), true
		}
	}
	return reflect.Value{}, false
}

// setINIValue sets field from e as gcfg would. Errors quote the value
// except for secrets.
func setINIValue(field reflect.Value, e iniEntry) error {
	t := field.Type()
	switch t {
	case secretType:
		if e.blank {
			return errors.New("a secret needs a value")
		}
		field.Set(reflect.ValueOf(config.NewSecret(e.value)))
		return nil
	case durationType:
		if e.blank {
			return errors.New("needs a value")
		}
		d, err := time.ParseDuration(strings.TrimSpace(e.value))
		if err != nil {
			return fmt.Errorf("invalid duration %q (want a number with a unit, such as 5s)", e.value)
		}
		field.SetInt(int64(d))
		return nil
	}
	switch t.Kind() {
	case reflect.Slice: // a multi-valued key: append, or clear on a blank
		if e.blank {
			field.SetZero()
			return nil
		}
		field.Set(reflect.Append(field, reflect.ValueOf(e.value)))
	case reflect.String:
		if e.blank {
			return errors.New("needs a value")
		}
		field.SetString(e.value)
	case reflect.Bool:
		if e.blank {
			field.SetBool(true)
			return nil
		}
		b, err := types.ParseBool(e.value)
		if err != nil {
			return fmt.Errorf("invalid bool %q (want true or false)", e.value)
		}
		field.SetBool(b)
	case reflect.Int, reflect.Uint:
		if e.blank {
			return errors.New("needs a value")
		}
		p := reflect.New(t)
		if err := types.ParseInt(p.Interface(), e.value, types.Dec|types.Hex); err != nil {
			return fmt.Errorf("invalid %s %q", t.Kind(), e.value)
		}
		field.Set(p.Elem())
	default:
		return fmt.Errorf("unsupported field type %s", t) // a bug in Config
	}
	return nil
}

package cloud

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"strings"

	"k8s.io/klog/v2"

	"github.com/ccmkit/ccmkit/framework/config"
)

// credentialSettings are the [Global] keys that take effect without a
// restart when the --cloud-config file changes: who authenticates and
// with which secret, as a rotated cloud-config Secret changes them (a new
// password, a new application credential, another trust). auth-url, the
// region, the project and every other setting keep the value they had at
// start-up; a change to one is logged, and takes a restart.
var credentialSettings = map[string]bool{
	"username":                      true,
	"user-id":                       true,
	"password":                      true,
	"user-domain-id":                true,
	"user-domain-name":              true,
	"application-credential-id":     true,
	"application-credential-name":   true,
	"application-credential-secret": true,
	"trust-id":                      true,
	"trustee-id":                    true,
	"trustee-password":              true,
}

// maxConfSize bounds what ConfWatch reads of a file to fingerprint it.
const maxConfSize = 1 << 20

// ConfWatch follows the --cloud-config file (and, with [Global]
// use-clouds, the clouds.yaml and secure.yaml merged at start-up) for
// keystoneAuth: reload, called for each new token, stats the files, reads
// them only when one's identity, size or modification time changed (the
// kubelet replaces a Secret volume's files by a rename), and parses them
// again only when their content changed. It is not safe for concurrent
// use: keystoneAuth.mu guards it.
type ConfWatch struct {
	src config.Source
	// running are the settings the provider runs with (Init's).
	running Config
	files   []string
	// stamps are the files as last read (nil: missing or unreadable),
	// sum their content.
	stamps []os.FileInfo
	sum    [sha256.Size]byte
	// err says why the files' current content is not used; nil when it is.
	err error
}

// NewConfWatch returns a watch of src.File, read as running was, which
// the provider runs with. Its first reload reads the files whatever their
// stamps, so a change made while the provider started is not missed.
func NewConfWatch(src config.Source, running *Config) *ConfWatch {
	return &ConfWatch{src: src, running: *running, files: append([]string{src.File}, running.cloudsFiles...)}
}

// reload reads the files again if they changed and sets the credential
// settings of g (credentialSettings) to theirs. It reports whether it
// changed g. A file that cannot be read or parsed, or whose credentials
// are incomplete, changes nothing: the error is logged and kept in w.err
// for the next failed token request to report. Nothing it logs holds a
// secret.
func (w *ConfWatch) reload(ctx context.Context, g *GlobalSection) bool {
	if w.unchanged() {
		return false
	}
	stamps, sum := w.read()
	w.stamps = stamps
	if sum == w.sum { // rewritten as it was, e.g. with another key of its Secret
		return false
	}
	w.sum = sum
	log := klog.FromContext(ctx)
	var next Config
	if err := config.Load(&next, w.src); err != nil {
		w.fail(ctx, err)
		return false
	}
	cand := *g
	takeCredentials(&cand, &next.Global)
	if errs := cand.validateCredentials(); len(errs) > 0 {
		w.fail(ctx, fmt.Errorf("its credentials with the [Global] settings in use: %w", errors.Join(errs...)))
		return false
	}
	if _, err := authOptions(&cand); err != nil {
		w.fail(ctx, err)
		return false
	}
	w.err = nil
	if changed := changedSettings(&w.running, &next); len(changed) > 0 {
		log.Info("The cloud config changed settings that take effect only after a restart; still using the values read at start-up",
			"file", w.src.File, "settings", changed)
	}
	if sameCredentials(g, &cand) {
		return false
	}
	*g = cand
	log.Info("The cloud config changed its credentials; requesting the next token with them", "file", w.src.File)
	return true
}

// fail records and logs why the files' new content is not used.
func (w *ConfWatch) fail(ctx context.Context, err error) {
	w.err = fmt.Errorf("%s changed but cannot be used (the credentials read before stay in use): %w", w.src.File, err)
	klog.FromContext(ctx).Error(err, "The cloud config changed but cannot be used; the credentials read before stay in use", "file", w.src.File)
}

// unchanged reports whether every file is the one last read, by its
// identity, size and modification time.
func (w *ConfWatch) unchanged() bool {
	if len(w.stamps) != len(w.files) { // never read
		return false
	}
	for i, path := range w.files {
		fi, err := os.Stat(path)
		switch old := w.stamps[i]; {
		case (err != nil) != (old == nil):
			return false
		case err == nil && !sameFile(old, fi):
			return false
		}
	}
	return true
}

// sameFile reports whether b is the file a was, unchanged.
func sameFile(a, b os.FileInfo) bool {
	return os.SameFile(a, b) && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime())
}

// read fingerprints the files: what each open file's Stat says, and a
// hash of their content (a missing or unreadable file counts as none).
func (w *ConfWatch) read() ([]os.FileInfo, [sha256.Size]byte) {
	h := sha256.New()
	stamps := make([]os.FileInfo, len(w.files))
	for i, path := range w.files {
		var data []byte
		if f, err := os.Open(path); err == nil {
			if fi, err := f.Stat(); err == nil {
				stamps[i] = fi
				data, _ = io.ReadAll(io.LimitReader(f, maxConfSize))
			}
			_ = f.Close()
		}
		_ = binary.Write(h, binary.BigEndian, int64(len(data)))
		h.Write(data)
	}
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	return stamps, sum
}

// takeCredentials sets the credential settings of dst to src's.
func takeCredentials(dst, src *GlobalSection) {
	d, s := reflect.ValueOf(dst).Elem(), reflect.ValueOf(src).Elem()
	for i := range d.NumField() {
		if credentialSettings[settingKey(d.Type().Field(i))] {
			d.Field(i).Set(s.Field(i))
		}
	}
}

// sameCredentials reports whether a and b have the same credential
// settings.
func sameCredentials(a, b *GlobalSection) bool {
	return len(changedKeys(reflect.ValueOf(a).Elem(), reflect.ValueOf(b).Elem(), func(key string) bool { return credentialSettings[key] })) == 0
}

// changedSettings names the settings but the credential ones that differ
// between old and next, as "[Section] key" ("[Section]" for a section of
// sections such as [LoadBalancerClass "<name>"]). Settings from the
// environment are left out: they do not change while the process runs.
func changedSettings(old, next *Config) []string {
	o, n := reflect.ValueOf(old).Elem(), reflect.ValueOf(next).Elem()
	var out []string
	for i := range o.NumField() {
		f := o.Type().Field(i)
		section := settingKey(f)
		if !f.IsExported() || section == "" {
			continue
		}
		if f.Type.Kind() != reflect.Struct {
			if !settingEqual(o.Field(i), n.Field(i)) {
				out = append(out, "["+section+"]")
			}
			continue
		}
		other := func(key string) bool { return section != "Global" || !credentialSettings[key] }
		for _, key := range changedKeys(o.Field(i), n.Field(i), other) {
			out = append(out, "["+section+"] "+key)
		}
	}
	return out
}

// changedKeys lists the keys, among those want picks, of the fields of
// the structs a and b that differ.
func changedKeys(a, b reflect.Value, want func(key string) bool) []string {
	var out []string
	for i := range a.NumField() {
		key := settingKey(a.Type().Field(i))
		if key != "" && want(key) && !settingEqual(a.Field(i), b.Field(i)) {
			out = append(out, key)
		}
	}
	return out
}

// settingKey is the INI key (or section) of a config field, "" for one
// that is not in the file.
func settingKey(f reflect.StructField) string {
	key, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	if key == "-" || !f.IsExported() {
		return ""
	}
	return key
}

// settingEqual compares two values of a setting; Secrets by their value.
func settingEqual(a, b reflect.Value) bool {
	if s, ok := a.Interface().(config.Secret); ok {
		return s.Equal(b.Interface().(config.Secret))
	}
	return reflect.DeepEqual(a.Interface(), b.Interface())
}

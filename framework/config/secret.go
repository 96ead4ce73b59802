package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
)

const redacted = "[redacted]"

// maxSecretSize bounds what Reveal reads, so that a path to the wrong file
// (or to /dev/zero) fails instead of exhausting memory.
const maxSecretSize = 1 << 20

// Secret is a credential: a value, or a file holding it. It never prints:
// String, GoString, every fmt verb, MarshalJSON and the logr and slog
// marshalers all produce "[redacted]". Only [Secret.Reveal] returns the value.
//
// A file-backed Secret is re-read when the file changes, so a rotated
// Kubernetes Secret volume takes effect without a restart. Copies of a Secret
// share its cache, and Reveal is safe for concurrent use.
type Secret struct {
	src *secretSource // a pointer, so that even fmt of an unexported field shows no value
}

type secretSource struct {
	value  string // used when path is ""
	path   string
	origin string // what named the path, such as "DO_ACCESS_TOKEN_FILE"; for errors

	mu     sync.Mutex
	info   os.FileInfo // of the file cached was read from
	cached string
}

// NewSecret returns a Secret holding value.
func NewSecret(value string) Secret { return Secret{&secretSource{value: value}} }

// SecretFromFile returns a Secret read from path on every Reveal that finds
// the file changed.
func SecretFromFile(path string) Secret { return Secret{&secretSource{path: path}} }

func secretFromEnvFile(path, envVar string) Secret {
	return Secret{&secretSource{path: path, origin: envVar}}
}

// Reveal returns the secret's value. For a file-backed secret it stats the
// file and re-reads it only when its identity, size or modification time
// changed; trailing newlines are trimmed. Errors name the file, never its
// content.
func (s *Secret) Reveal() (string, error) {
	if s == nil || s.src == nil {
		return "", nil
	}
	if s.src.path == "" {
		return s.src.value, nil
	}
	return s.src.read()
}

func (src *secretSource) read() (string, error) {
	src.mu.Lock()
	defer src.mu.Unlock()

	fi, err := os.Stat(src.path)
	if err != nil {
		return "", src.wrap(err)
	}
	if src.info != nil && sameFile(src.info, fi) {
		return src.cached, nil
	}

	f, err := os.Open(src.path)
	if err != nil {
		return "", src.wrap(err)
	}
	defer f.Close()
	// Stat the open file so that the cached info describes what was read.
	if fi, err = f.Stat(); err != nil {
		return "", src.wrap(err)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxSecretSize+1))
	if err != nil {
		return "", src.wrap(err)
	}
	if len(data) > maxSecretSize {
		return "", src.wrap(fmt.Errorf("secret file %s is larger than %d bytes", src.path, maxSecretSize))
	}
	src.info = fi
	src.cached = strings.TrimRight(string(data), "\r\n")
	return src.cached, nil
}

func (src *secretSource) wrap(err error) error {
	if src.origin == "" {
		return err
	}
	return fmt.Errorf("%s: %w", src.origin, err)
}

func sameFile(a, b os.FileInfo) bool {
	return os.SameFile(a, b) && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime())
}

// IsZero reports whether s has neither a value nor a file.
func (s Secret) IsZero() bool {
	return s.src == nil || (s.src.path == "" && s.src.value == "")
}

// fromFile reports whether s is file-backed.
func (s Secret) fromFile() bool { return s.src != nil && s.src.path != "" }

// Equal reports whether s and t hold the same value, or name the same file.
// go-cmp uses it, so configs holding a Secret compare without options.
func (s Secret) Equal(t Secret) bool {
	if s.IsZero() || t.IsZero() {
		return s.IsZero() == t.IsZero()
	}
	if s.fromFile() || t.fromFile() {
		return s.src.path == t.src.path
	}
	return s.src.value == t.src.value
}

// String returns "[redacted]".
func (Secret) String() string { return redacted }

// GoString returns "[redacted]".
func (Secret) GoString() string { return redacted }

// Format writes "[redacted]" for every verb, so that no fmt verb (%x
// included) reveals the value.
func (Secret) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, redacted) }

// MarshalJSON returns the JSON string "[redacted]".
func (Secret) MarshalJSON() ([]byte, error) { return json.Marshal(redacted) }

// MarshalLog implements logr.Marshaler, which klog honours.
func (Secret) MarshalLog() any { return redacted }

// LogValue implements slog.LogValuer.
func (Secret) LogValue() slog.Value { return slog.StringValue(redacted) }

// UnmarshalJSON sets s from a JSON string, as found in a config file. null
// leaves s unchanged.
func (s *Secret) UnmarshalJSON(data []byte) error {
	if string(data) == "null" {
		return nil
	}
	var v string
	if err := json.Unmarshal(data, &v); err != nil {
		return errors.New("a secret must be a string") // never echo data
	}
	*s = NewSecret(v)
	return nil
}

package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestSecretReveal(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name    string
		secret  Secret
		want    string
		wantErr bool
	}{
		{name: "zero", secret: Secret{}, want: ""},
		{name: "value", secret: NewSecret(secretValue), want: secretValue},
		{name: "value kept verbatim", secret: NewSecret(" a b\n"), want: " a b\n"},
		{name: "file", secret: SecretFromFile(write("plain", secretValue)), want: secretValue},
		{name: "file trailing newline trimmed", secret: SecretFromFile(write("lf", secretValue+"\n")), want: secretValue},
		{name: "file trailing CRLF trimmed", secret: SecretFromFile(write("crlf", secretValue+"\r\n\r\n")), want: secretValue},
		{name: "file leading space kept", secret: SecretFromFile(write("space", " x ")), want: " x "},
		{name: "file missing", secret: SecretFromFile(filepath.Join(dir, "missing")), wantErr: true},
		{name: "directory", secret: SecretFromFile(dir), wantErr: true},
		{name: "file too large", secret: SecretFromFile(write("large", strings.Repeat("x", maxSecretSize+1))), wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.secret.Reveal()
			if (err != nil) != tt.wantErr {
				t.Fatalf("Reveal() error = %v, wantErr %v", err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("Reveal() = %q, want %q", got, tt.want)
			}
		})
	}

	var nilSecret *Secret
	if got, err := nilSecret.Reveal(); got != "" || err != nil {
		t.Errorf("nil Reveal() = %q, %v", got, err)
	}
}

func TestSecretFileErrorsNameFileNotContent(t *testing.T) {
	dir := t.TempDir()
	large := filepath.Join(dir, "large")
	must(t, os.WriteFile(large, []byte(strings.Repeat(secretValue, maxSecretSize/len(secretValue)+1)), 0o600))
	for _, path := range []string{filepath.Join(dir, "missing"), dir, large} {
		s := secretFromEnvFile(path, "DO_ACCESS_TOKEN_FILE")
		_, err := s.Reveal()
		if err == nil {
			t.Fatalf("Reveal(%s) succeeded, want an error", path)
		}
		for _, want := range []string{"DO_ACCESS_TOKEN_FILE: ", path} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not name %q", err, want)
			}
		}
		if strings.Contains(err.Error(), secretValue) {
			t.Errorf("error reveals the secret: %.100s", err)
		}
	}
}

// TestSecretRereadsChangedFile rewrites the file with content of the same size
// and sets distinct modification times explicitly, so the test does not
// depend on the file system's timestamp granularity.
func TestSecretRereadsChangedFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "token")
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	write := func(content string, mtime time.Time) {
		t.Helper()
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	reveal := func(s Secret, want string) {
		t.Helper()
		got, err := s.Reveal()
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("Reveal() = %q, want %q", got, want)
		}
	}

	write("token-one\n", t0)
	s := SecretFromFile(p)
	reveal(s, "token-one")

	write("token-two\n", t0.Add(time.Second)) // rotated: same size, new mtime
	reveal(s, "token-two")

	write("token-333", t0.Add(time.Second)) // new size, same mtime
	reveal(s, "token-333")

	// Unchanged metadata means the cached value is served without a read:
	// the content written behind Reveal's back is not seen.
	write("token-444", t0.Add(time.Second))
	reveal(s, "token-333")

	// Copies share the cache.
	c := s
	write("token-five\n", t0.Add(2*time.Second))
	reveal(c, "token-five")
	reveal(s, "token-five")
}

// TestSecretFollowsKubernetesVolumeUpdate swaps the ..data symlink the way
// the kubelet updates a Secret volume.
func TestSecretFollowsKubernetesVolumeUpdate(t *testing.T) {
	dir := t.TempDir()
	mkversion := func(name, token string) {
		t.Helper()
		if err := os.Mkdir(filepath.Join(dir, name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name, "token"), []byte(token), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	mkversion("..v1", "token-one")
	must(t, os.Symlink("..v1", filepath.Join(dir, "..data")))
	must(t, os.Symlink(filepath.Join("..data", "token"), filepath.Join(dir, "token")))

	s := SecretFromFile(filepath.Join(dir, "token"))
	if got, err := s.Reveal(); err != nil || got != "token-one" {
		t.Fatalf("Reveal() = %q, %v; want token-one", got, err)
	}

	mkversion("..v2", "token-two")
	must(t, os.Symlink("..v2", filepath.Join(dir, "..data_tmp")))
	must(t, os.Rename(filepath.Join(dir, "..data_tmp"), filepath.Join(dir, "..data")))
	if got, err := s.Reveal(); err != nil || got != "token-two" {
		t.Fatalf("Reveal() after update = %q, %v; want token-two", got, err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestSecretConcurrentReveal(t *testing.T) {
	p := filepath.Join(t.TempDir(), "token")
	must(t, os.WriteFile(p, []byte("token-0"), 0o600))
	s := SecretFromFile(p)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 200 {
				v, err := s.Reveal()
				if err != nil {
					t.Error(err)
					return
				}
				if !strings.HasPrefix(v, "token-") {
					t.Errorf("Reveal() = %q", v)
					return
				}
			}
		})
	}
	wg.Go(func() {
		for i := range 50 {
			// Write to a temporary file and rename, as a rotation does, so
			// readers never see a half-written file.
			tmp := fmt.Sprintf("%s.%d", p, i)
			if err := os.WriteFile(tmp, []byte(fmt.Sprintf("token-%d", i)), 0o600); err != nil {
				t.Error(err)
				return
			}
			if err := os.Rename(tmp, p); err != nil {
				t.Error(err)
				return
			}
		}
	})
	wg.Wait()
}

func TestSecretNeverPrints(t *testing.T) {
	type holder struct {
		Token  Secret
		hidden Secret
		Ptr    *Secret
	}
	s := NewSecret(secretValue)
	h := holder{Token: s, hidden: s, Ptr: &s}

	var out bytes.Buffer
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d", "%T"} {
		fmt.Fprintf(&out, verb+"\n", s)
		fmt.Fprintf(&out, verb+"\n", &s)
	}
	fmt.Fprintf(&out, "%v %+v %#v\n", h, h, h)
	fmt.Fprint(&out, s, h, "\n")
	fmt.Fprintln(&out, s.String(), s.GoString())

	j, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	out.Write(j)

	logger := slog.New(slog.NewJSONHandler(&out, nil))
	logger.Info("config", "token", s, "holder", h)
	logger = slog.New(slog.NewTextHandler(&out, nil))
	logger.Info("config", "token", s, "holder", h)

	if strings.Contains(out.String(), secretValue) {
		t.Errorf("output reveals the secret:\n%s", out.String())
	}
	if !strings.Contains(string(j), `"Token":"[redacted]"`) {
		t.Errorf("json.Marshal() = %s, want the token as [redacted]", j)
	}
	if got := (Secret{}).MarshalLog(); got != "[redacted]" {
		t.Errorf("MarshalLog() = %v", got)
	}
}

func TestSecretUnmarshalJSON(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		start   Secret
		want    Secret
		wantErr bool
	}{
		{name: "string", in: `"abc"`, want: NewSecret("abc")},
		{name: "escaped string", in: `"a\"b"`, want: NewSecret(`a"b`)},
		{name: "null keeps value", in: `null`, start: NewSecret("old"), want: NewSecret("old")},
		{name: "number", in: `12345`, wantErr: true},
		{name: "object", in: `{"value": "abc"}`, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := tt.start
			err := json.Unmarshal([]byte(tt.in), &s)
			if (err != nil) != tt.wantErr {
				t.Fatalf("Unmarshal(%s) error = %v, wantErr %v", tt.in, err, tt.wantErr)
			}
			if err != nil {
				if strings.Contains(err.Error(), "12345") || strings.Contains(err.Error(), "abc") {
					t.Errorf("error %q echoes the input", err)
				}
				return
			}
			if diff := cmp.Diff(tt.want, s); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSecretIsZeroAndEqual(t *testing.T) {
	tests := []struct {
		name      string
		a, b      Secret
		wantEqual bool
		wantZeroA bool
	}{
		{name: "both zero", wantEqual: true, wantZeroA: true},
		{name: "empty value is zero", a: NewSecret(""), wantEqual: true, wantZeroA: true},
		{name: "same value", a: NewSecret("x"), b: NewSecret("x"), wantEqual: true},
		{name: "different value", a: NewSecret("x"), b: NewSecret("y")},
		{name: "value and zero", a: NewSecret("x")},
		{name: "same file", a: SecretFromFile("/f"), b: SecretFromFile("/f"), wantEqual: true},
		{name: "different file", a: SecretFromFile("/f"), b: SecretFromFile("/g")},
		{name: "file and value", a: SecretFromFile("/f"), b: NewSecret("/f")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.a.IsZero(); got != tt.wantZeroA {
				t.Errorf("IsZero() = %v, want %v", got, tt.wantZeroA)
			}
			if got := tt.a.Equal(tt.b); got != tt.wantEqual {
				t.Errorf("a.Equal(b) = %v, want %v", got, tt.wantEqual)
			}
			if got := tt.b.Equal(tt.a); got != tt.wantEqual {
				t.Errorf("b.Equal(a) = %v, want %v", got, tt.wantEqual)
			}
		})
	}
}

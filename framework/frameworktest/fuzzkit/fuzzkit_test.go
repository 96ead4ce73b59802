package fuzzkit

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ccmkit/ccmkit/framework/config"
	"github.com/ccmkit/ccmkit/framework/providerid"
)

type lbConfig struct {
	Protocol string `annotation:"protocol" enum:"tcp,http" default:"tcp"`
	Port     int    `annotation:"port" alias:"old-port" min:"1"`
	ID       string `annotation:"example.com/id"`
}

func TestAnnotations(t *testing.T) {
	got := Annotations[lbConfig](t, "p/", "protocol=http\n#1=8080\n#6=x\nexample.com/id=a=b\nunknown\n\n")
	want := map[string]string{
		"p/protocol": "http", "p/port": "8080", "p/old-port": "x", "example.com/id": "a=b", "p/unknown": "",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Annotations (-want +got):\n%s", diff)
	}
}

func TestDecodeReturnsTheConfigAndEveryError(t *testing.T) {
	cfg, err := Decode[lbConfig](t, "p/", nil, map[string]string{"p/protocol": "udp", "p/old-port": "0", "p/port": "80"})
	if cfg.Protocol != "tcp" || cfg.Port != 80 {
		t.Errorf("config = %+v, want the default protocol and port 80", cfg)
	}
	if err == nil || len(unjoin(err)) != 1 {
		t.Errorf("err = %v, want one error (protocol)", err)
	}
}

type envConfig struct {
	Token config.Secret `env:"X_TOKEN"`
	Name  string        `env:"X_NAME"`
	URL   string        `env:"X_URL" required:"true"`
}

func TestEnvMarksSecretsAndDropsFiles(t *testing.T) {
	got := Env[envConfig](t, "#0=abc\nX_NAME=n"+Canary+"\nX_TOKEN_FILE=/etc/passwd\n#2=u")
	want := map[string]string{"X_TOKEN": Canary + "abc", "X_NAME": "n", "X_URL": "u"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Env (-want +got):\n%s", diff)
	}
}

// failRecorder is a testing.TB that records failures instead of failing.
type failRecorder struct {
	testing.TB
	failed bool
}

func (r *failRecorder) Errorf(string, ...any) { r.failed = true }
func (r *failRecorder) Helper()               {}

func TestNoSecret(t *testing.T) {
	for _, tt := range []struct {
		err  error
		fail bool
	}{
		{nil, false},
		{errors.New("X_URL: required"), false},
		{errors.New("token " + Canary + "x is bad"), true},
		{errors.New("password hunter2-hunter2 is bad"), true},
		{errors.New("password abc is bad"), false}, // too short to look for
	} {
		r := &failRecorder{TB: t}
		NoSecret(r, tt.err, "hunter2-hunter2", "abc")
		if r.failed != tt.fail {
			t.Errorf("NoSecret(%v) failed = %v, want %v", tt.err, r.failed, tt.fail)
		}
	}
}

func TestProviderIDCatchesABrokenCodec(t *testing.T) {
	r := &failRecorder{TB: t}
	ProviderID(r, providerid.Codec{Scheme: "cloud"}, "cloud://i-1")
	if r.failed {
		t.Error("a valid providerID failed")
	}
	// A scheme with "://" in it formats IDs Parse cannot read back.
	ProviderID(r, providerid.Codec{Scheme: "a://b"}, "i-1")
	if !r.failed {
		t.Error("a codec that does not round-trip passed")
	}
}

func TestURLPassword(t *testing.T) {
	for in, want := range map[string]string{
		"https://u:pw-1@host/":     "pw-1",
		"https://host/":            "",
		"http://u:pw-2@%zz/x":      "pw-2",
		"no scheme":                "",
		"https://u@host":           "",
		"https://u:p@ss@host/path": "p@ss",
		"ops:pw-3@host/x":          "pw-3",
		"0//:000000@0":             "000000",
		"http://a#:pw-4@host":      "pw-4",
		"//0:000000@000000":        "",
		"0//:000000@000000":        "",
	} {
		if got := URLPassword(in); got != want {
			t.Errorf("URLPassword(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestWithoutNamesKeepsALeakFindable(t *testing.T) {
	for _, tt := range []struct {
		err  error
		fail bool
	}{
		{errors.New("X_TOKEN: required (set X_TOKEN or X_TOKEN_FILE)"), false}, // " X_TOK" is in a name only
		{errors.New("X_URL: bad url https://u: X_TOK@h"), true},
	} {
		r := &failRecorder{TB: t}
		NoSecret(r, withoutNames[envConfig](t, tt.err), " X_TOK")
		if r.failed != tt.fail {
			t.Errorf("NoSecret(withoutNames(%v)) failed = %v, want %v", tt.err, r.failed, tt.fail)
		}
	}
}

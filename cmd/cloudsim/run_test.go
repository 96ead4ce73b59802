package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

const exampleScenario = "../../examples/cloudsim/skeleton.yaml"

func TestRun(t *testing.T) {
	envFile := filepath.Join(t.TempDir(), "skeleton.env")
	cs := startRun(t, "--scenario="+exampleScenario, "--print-env-file="+envFile)

	url := cs.env["CLOUDSIM_URL"]
	wantEnv := map[string]string{
		"CLOUDSIM_URL":      url,
		"CLOUDSIM_PROVIDER": "skeleton",
		"SKELETON_API_URL":  url,
		"SKELETON_TOKEN":    "skeleton-demo-token",
	}
	if diff := cmp.Diff(wantEnv, cs.env); diff != "" {
		t.Errorf("printed environment (-want +got):\n%s", diff)
	}
	if !strings.HasPrefix(url, "http://127.0.0.1:") {
		t.Errorf("CLOUDSIM_URL = %q, want http://127.0.0.1:<port>", url)
	}
	file, err := os.ReadFile(envFile)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(cs.printed, string(file)); diff != "" {
		t.Errorf("--print-env-file differs from stdout (-stdout +file):\n%s", diff)
	}

	checkServesScenario(t, cs.env)

	if err := cs.stop(); err != nil {
		t.Errorf("run after cancel = %v, want nil", err)
	}
	wantStderr := fmt.Sprintf("skeleton cloud simulator listening on %s; stats at %s/_sim/stats", url, url)
	if got := cs.stderr.String(); !strings.Contains(got, wantStderr) {
		t.Errorf("stderr = %q, want it to contain %q", got, wantStderr)
	}
}

// checkServesScenario checks that the simulator env points at serves the
// example scenario and counts requests.
func checkServesScenario(t *testing.T, env map[string]string) {
	t.Helper()
	url, token := env["SKELETON_API_URL"], env["SKELETON_TOKEN"]

	var state struct {
		Instances []struct{ Name, Zone string }
	}
	getJSON(t, env["CLOUDSIM_URL"]+"/_sim/state", "", &state)
	wantInstances := []struct{ Name, Zone string }{{"node-1", "sk-1a"}, {"node-2", "sk-1b"}, {"node-3", "sk-1b"}}
	if diff := cmp.Diff(wantInstances, state.Instances); diff != "" {
		t.Errorf("/_sim/state instances (-want +got):\n%s", diff)
	}

	var list struct {
		Instances []struct{ ID, Name string }
	}
	getJSON(t, url+"/v1/instances", token, &list)
	if len(list.Instances) != 3 {
		t.Errorf("GET /v1/instances: %d instances, want 3", len(list.Instances))
	}

	var stats struct {
		Operations map[string]int `json:"operations"`
	}
	getJSON(t, url+"/_sim/stats", "", &stats)
	if diff := cmp.Diff(map[string]int{"GET /v1/instances": 1}, stats.Operations); diff != "" {
		t.Errorf("/_sim/stats operations (-want +got):\n%s", diff)
	}
}

func TestRunInjectsLatency(t *testing.T) {
	const latency = 25 * time.Millisecond
	scenario := writeScenario(t, "latency: 25ms\ninstances: [{name: n}]\n")
	cs := startRun(t, "--scenario="+scenario)
	url, token := cs.env["SKELETON_API_URL"], cs.env["SKELETON_TOKEN"]

	for range 2 {
		start := time.Now()
		getJSON(t, url+"/v1/instances", token, nil)
		if elapsed := time.Since(start); elapsed < latency {
			t.Errorf("GET /v1/instances took %v, want at least %v", elapsed, latency)
		}
	}
	var stats struct {
		LatencyMS         float64 `json:"latency_ms"`
		InjectedLatencyMS float64 `json:"injected_latency_ms"`
	}
	getJSON(t, url+"/_sim/stats", "", &stats)
	if stats.LatencyMS != 25 || stats.InjectedLatencyMS != 50 {
		t.Errorf("/_sim/stats: latency_ms %v, injected_latency_ms %v; want 25 and 50 (two requests)", stats.LatencyMS, stats.InjectedLatencyMS)
	}
}

func TestRunErrors(t *testing.T) {
	valid := writeScenario(t, "instances: [{name: n}]\n")
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no scenario", nil, "--scenario is required"},
		{"unknown flag", []string{"--scenario=" + valid, "--nope"}, "unknown flag: --nope"},
		{"extra argument", []string{"--scenario=" + valid, "extra"}, `unexpected arguments ["extra"]`},
		{"all interfaces", []string{"--scenario=" + valid, "--listen=0.0.0.0:0"}, "--listen=0.0.0.0:0: not a loopback address"},
		{"no host", []string{"--scenario=" + valid, "--listen=:8080"}, "--listen=:8080: not a loopback address"},
		{"IPv6 any", []string{"--scenario=" + valid, "--listen=[::]:0"}, "--listen=[::]:0: not a loopback address"},
		{"routable address", []string{"--scenario=" + valid, "--listen=192.0.2.1:80"}, "not a loopback address"},
		{"host name", []string{"--scenario=" + valid, "--listen=example.com:80"}, "not a loopback address"},
		{"no port", []string{"--scenario=" + valid, "--listen=127.0.0.1"}, "missing port"},
		{"missing scenario file", []string{"--scenario=/nonexistent.yaml"}, "reading scenario: open /nonexistent.yaml"},
		{"unknown provider", []string{"--scenario=" + valid, "--provider=nimbus"}, `unknown provider "nimbus", want one of ` + strings.Join(providerNames(), ", ")},
		{
			"scenario for another provider",
			[]string{"--scenario=" + writeScenario(t, "provider: nimbus\n"), "--provider=skeleton"},
			`the scenario is for provider "nimbus", not --provider=skeleton`,
		},
		{"scenario's unknown provider", []string{"--scenario=" + writeScenario(t, "provider: nimbus\n")}, `unknown provider "nimbus"`},
		{"invalid scenario", []string{"--scenario=" + writeScenario(t, "latency: soon\n")}, "invalid scenario: latency: Invalid value"},
		{"invalid settleAfter", []string{"--scenario=" + writeScenario(t, "settleAfter: -1s\n")}, "settleAfter: Invalid value"},
		{"DNS for a cloud without names", []string{"--scenario=" + valid, "--dns=127.0.0.1:0"}, "--dns: the skeleton simulator hands out no DNS names"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr strings.Builder
			err := run(t.Context(), tt.args, &stdout, &stderr)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("run(%q) = %v, want an error containing %q", tt.args, err, tt.want)
			}
			if stdout.Len() != 0 {
				t.Errorf("stdout = %q, want nothing on error", stdout.String())
			}
		})
	}
}

func TestCheckLoopback(t *testing.T) {
	tests := []struct {
		listen string
		ok     bool
	}{
		{"127.0.0.1:0", true},
		{"127.1.2.3:8080", true},
		{"[::1]:0", true},
		{"localhost:0", true},
		{"0.0.0.0:0", false},
		{":0", false},
		{"[::]:0", false},
		{"10.0.0.1:0", false},
		{"[fe80::1%lo]:0", false},
		{"localhost.example.com:0", false},
	}
	for _, tt := range tests {
		if err := checkLoopback(tt.listen); (err == nil) != tt.ok {
			t.Errorf("checkLoopback(%q) = %v, want ok=%v", tt.listen, err, tt.ok)
		}
	}
}

func TestProviderFor(t *testing.T) {
	tests := []struct {
		name, flag, scenario string
		want                 string
		wantErr              bool
	}{
		{name: "default", scenario: "instances: []", want: "skeleton"},
		{name: "scenario", scenario: "provider: nimbus", want: "nimbus"},
		{name: "flag", flag: "nimbus", scenario: "instances: []", want: "nimbus"},
		{name: "both agree", flag: "nimbus", scenario: "provider: nimbus", want: "nimbus"},
		{name: "both disagree", flag: "skeleton", scenario: "provider: nimbus", wantErr: true},
		{name: "unparsable scenario", scenario: "[", want: "skeleton"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := providerFor(tt.flag, []byte(tt.scenario))
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Errorf("providerFor(%q, %q) = %q, %v; want %q, error %v", tt.flag, tt.scenario, got, err, tt.want, tt.wantErr)
			}
		})
	}
}

// cloudsim is a run in progress.
type cloudsim struct {
	printed string            // stdout up to the empty line
	env     map[string]string // printed, parsed
	stderr  *syncBuffer
	stop    func() error // cancels run and returns its error
}

// startRun runs cloudsim with args until the test ends (or stop), and
// returns once it has printed its environment.
func startRun(t *testing.T, args ...string) *cloudsim {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	stdoutR, stdoutW := io.Pipe()
	cs := &cloudsim{stderr: &syncBuffer{}}
	done := make(chan error, 1)
	go func() {
		err := run(ctx, args, stdoutW, cs.stderr)
		_ = stdoutW.CloseWithError(fmt.Errorf("run returned %w", err))
		done <- err
	}()
	var once sync.Once
	var runErr error
	cs.stop = func() error {
		once.Do(func() {
			cancel()
			runErr = <-done
		})
		return runErr
	}
	t.Cleanup(func() { _ = cs.stop() })

	printed, err := readEnv(stdoutR)
	if err != nil {
		t.Fatalf("reading cloudsim's stdout: %v; stderr:\n%s", err, cs.stderr)
	}
	go func() { _, _ = io.Copy(io.Discard, stdoutR) }() // nothing more is expected
	cs.printed = printed
	cs.env = parseEnv(t, printed)
	return cs
}

// readEnv reads KEY=VALUE lines up to and including the empty line.
func readEnv(r io.Reader) (string, error) {
	var b strings.Builder
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		b.WriteString(sc.Text() + "\n")
		if sc.Text() == "" {
			return b.String(), nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	return "", fmt.Errorf("no empty line after %q", b.String())
}

func parseEnv(t *testing.T, printed string) map[string]string {
	t.Helper()
	env := map[string]string{}
	for line := range strings.Lines(strings.TrimSuffix(printed, "\n\n")) {
		k, v, ok := strings.Cut(strings.TrimSuffix(line, "\n"), "=")
		if !ok {
			t.Fatalf("printed line %q is not KEY=VALUE", line)
		}
		env[k] = v
	}
	return env
}

// getJSON GETs url, with a bearer token unless it is "", wants a 200, and
// decodes the body into v unless it is nil.
func getJSON(t *testing.T, url, token string, v any) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: reading body: %v", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s %s", url, resp.Status, body)
	}
	if v != nil {
		if err := json.Unmarshal(body, v); err != nil {
			t.Fatalf("GET %s: decoding %s: %v", url, body, err)
		}
	}
}

func writeScenario(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "scenario.yaml")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// syncBuffer is a strings.Builder safe for concurrent use.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

package framework_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/framework/config"
	"github.com/ccmkit/ccmkit/framework/frameworktest"
)

// tokenCloud is a provider whose cloud is an HTTP server that accepts one
// bearer token; it opts in to make-secret with a tagged config.
type tokenCloud struct {
	cfg struct {
		Token  config.Secret `json:"token" env:"TOKEN_CLOUD_TOKEN" required:"true" secret:"token"`
		URL    string        `json:"url" env:"TOKEN_CLOUD_URL" secret:"url"`
		Region string        `json:"region" env:"TOKEN_CLOUD_REGION"`
	}
	spec     framework.CredentialSecret
	complete func(map[string][]byte) error
}

func (p *tokenCloud) Name() string { return "tokencloud" }
func (p *tokenCloud) Config() any  { return &p.cfg }
func (p *tokenCloud) CredentialSecret() framework.CredentialSecret {
	if p.spec.Name == "" {
		return framework.CredentialSecret{Name: "token-cloud"}
	}
	return p.spec
}

func (p *tokenCloud) CompleteSecret(_ context.Context, data map[string][]byte) error {
	if p.complete == nil {
		return nil
	}
	return p.complete(data)
}

func (p *tokenCloud) Init(ctx context.Context, env *framework.Env) error {
	token, err := p.cfg.Token.Reveal()
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.cfg.URL+"/account", nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := env.HTTPClient.Do(req)
	if err != nil {
		return err
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return errors.New("the cloud refused the token (check TOKEN_CLOUD_TOKEN)")
	}
	return nil
}

const cloudToken = "tok-secret-7f3a9"

// startTokenCloud serves GET /account for cloudToken and counts requests.
func startTokenCloud(t *testing.T) (string, *atomic.Int32) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if r.Header.Get("Authorization") != "Bearer "+cloudToken {
			http.Error(w, `{"message":"unauthorized"}`, http.StatusUnauthorized)
			return
		}
		_, _ = w.Write([]byte(`{}`))
	}))
	t.Cleanup(srv.Close)
	return srv.URL, &calls
}

func runMakeSecret(t *testing.T, p framework.Provider, args ...string) (stdout, log string, err error) {
	t.Helper()
	return frameworktest.RunMakeSecret(t, p, args...)
}

func parseSecret(t *testing.T, out string) *corev1.Secret {
	t.Helper()
	return frameworktest.ReadSecret(t, []byte(out))
}

func TestMakeSecretChecksAndPrints(t *testing.T) {
	url, calls := startTokenCloud(t)
	t.Setenv("TOKEN_CLOUD_TOKEN", cloudToken)
	t.Setenv("TOKEN_CLOUD_URL", url)
	t.Setenv("TOKEN_CLOUD_REGION", "r1")

	out, log, err := runMakeSecret(t, &tokenCloud{}, "-v=10")
	if err != nil {
		t.Fatalf("make-secret: %v\n%s", err, log)
	}
	s := parseSecret(t, out)
	if s.Namespace != "kube-system" || s.Name != "token-cloud" || s.Type != corev1.SecretTypeOpaque {
		t.Errorf("Secret is %s/%s of type %s, want kube-system/token-cloud Opaque", s.Namespace, s.Name, s.Type)
	}
	want := map[string][]byte{"token": []byte(cloudToken), "url": []byte(url)}
	if diff := cmp.Diff(want, s.Data); diff != "" {
		t.Errorf("data (-want +got):\n%s", diff)
	}
	if calls.Load() == 0 {
		t.Error("the credentials were not checked against the cloud")
	}
	if !strings.Contains(log, "Secret assembled") {
		t.Errorf("nothing logged at -v=10, so the log check below proves nothing:\n%s", log)
	}
	if strings.Contains(log, cloudToken) {
		t.Errorf("the log holds the token:\n%s", log)
	}
}

func TestMakeSecretOfflineMakesNoCall(t *testing.T) {
	url, calls := startTokenCloud(t)
	t.Setenv("TOKEN_CLOUD_TOKEN", "not-the-token")
	t.Setenv("TOKEN_CLOUD_URL", url)

	out, log, err := runMakeSecret(t, &tokenCloud{}, "--offline", "--namespace=ccm", "--name=creds", "-o", "json")
	if err != nil {
		t.Fatalf("make-secret --offline: %v\n%s", err, log)
	}
	var s corev1.Secret
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("-o json printed no JSON Secret: %v\n%s", err, out)
	}
	if s.Namespace != "ccm" || s.Name != "creds" || string(s.Data["token"]) != "not-the-token" {
		t.Errorf("Secret %s/%s with token %q, want ccm/creds with the given token", s.Namespace, s.Name, s.Data["token"])
	}
	if n := calls.Load(); n != 0 {
		t.Errorf("--offline made %d API calls", n)
	}
}

func TestMakeSecretFailures(t *testing.T) {
	url, _ := startTokenCloud(t)
	for _, tc := range []struct {
		name  string
		env   map[string]string
		args  []string
		want  string
		avoid string
	}{
		{name: "wrong token", env: map[string]string{"TOKEN_CLOUD_TOKEN": "wrong-token-41", "TOKEN_CLOUD_URL": url},
			want: "refused the token", avoid: "wrong-token-41"},
		{name: "missing token", env: map[string]string{"TOKEN_CLOUD_URL": url},
			want: "TOKEN_CLOUD_TOKEN: required"},
		{name: "missing token offline", env: map[string]string{"TOKEN_CLOUD_URL": url}, args: []string{"--offline"},
			want: "TOKEN_CLOUD_TOKEN: required"},
		{name: "token file missing", env: map[string]string{"TOKEN_CLOUD_TOKEN_FILE": "/nonexistent/token"},
			want: "TOKEN_CLOUD_TOKEN_FILE"},
		{name: "bad output", env: map[string]string{"TOKEN_CLOUD_TOKEN": cloudToken}, args: []string{"-o", "xml"},
			want: "--output"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			out, log, err := runMakeSecret(t, &tokenCloud{}, tc.args...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
			if out != "" {
				t.Errorf("printed a Secret on failure:\n%s", out)
			}
			if tc.avoid != "" && (strings.Contains(err.Error(), tc.avoid) || strings.Contains(log, tc.avoid)) {
				t.Errorf("the error or log holds the secret: %v\n%s", err, log)
			}
		})
	}
}

func TestMakeSecretConfigFileAndCompleter(t *testing.T) {
	url, _ := startTokenCloud(t)
	file := filepath.Join(t.TempDir(), "cloud.yaml")
	content := "token: " + cloudToken + "\nurl: " + url + "\n"
	if err := os.WriteFile(file, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	p := &tokenCloud{
		spec: framework.CredentialSecret{Namespace: "cloud-ns", Name: "cloud-config", ConfigFileKey: "cloud.yaml"},
		complete: func(data map[string][]byte) error {
			delete(data, "url")
			data["derived"] = []byte("from-" + string(data["cloud.yaml"][:5]))
			return nil
		},
	}
	out, log, err := runMakeSecret(t, p, "--cloud-config", file)
	if err != nil {
		t.Fatalf("make-secret: %v\n%s", err, log)
	}
	s := parseSecret(t, out)
	want := map[string][]byte{"cloud.yaml": []byte(content), "token": []byte(cloudToken), "derived": []byte("from-token")}
	if diff := cmp.Diff(want, s.Data); diff != "" {
		t.Errorf("data (-want +got):\n%s", diff)
	}
	if s.Namespace != "cloud-ns" || s.Name != "cloud-config" {
		t.Errorf("Secret is %s/%s, want cloud-ns/cloud-config", s.Namespace, s.Name)
	}

	_, _, err = runMakeSecret(t, p, "--offline")
	if err == nil || !strings.Contains(err.Error(), "--cloud-config: required") {
		t.Errorf("no --cloud-config: error %v, want one saying it is required", err)
	}
}

func TestNoMakeSecretWithoutSecretMaker(t *testing.T) {
	cmd := framework.NewCommand(plainProvider{})
	for _, c := range cmd.Commands() {
		if c.Name() == "make-secret" {
			t.Fatal("a provider without SecretMaker got make-secret")
		}
	}
}

type plainProvider struct{}

func (plainProvider) Name() string                               { return "plain" }
func (plainProvider) Init(context.Context, *framework.Env) error { return nil }

package tritonsim

import (
	"context"
	"errors"
	"net/http"
	"testing"

	triton "github.com/joyent/triton-go"
	"github.com/joyent/triton-go/account"
	"github.com/joyent/triton-go/authentication"
	"github.com/joyent/triton-go/compute"
	tritonerrors "github.com/joyent/triton-go/errors"
	"github.com/joyent/triton-go/network"
)

// clients are real triton-go clients for a simulator, signing with the
// account key through triton-go's own PrivateKeySigner.
type clients struct {
	compute *compute.ComputeClient
	network *network.NetworkClient
	account *account.AccountClient
}

func connect(t *testing.T, s *Server) clients {
	t.Helper()
	signer, err := authentication.NewPrivateKeySigner(authentication.PrivateKeySignerInput{
		KeyID: s.KeyFingerprint(), PrivateKeyMaterial: s.AccountKeyPEM(), AccountName: s.Account(),
	})
	if err != nil {
		t.Fatal(err)
	}
	return connectWith(t, s, signer)
}

func connectWith(t *testing.T, s *Server, signer authentication.Signer) clients {
	t.Helper()
	cfg := &triton.ClientConfig{TritonURL: s.URL(), AccountName: s.Account(), Signers: []authentication.Signer{signer}}
	cc, err := compute.NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	nc, err := network.NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ac, err := account.NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return clients{compute: cc, network: nc, account: ac}
}

func setup(t *testing.T, opts Options) (*Server, clients) {
	t.Helper()
	s := NewServer(t, opts)
	return s, connect(t, s)
}

// wantAPIError fails unless err is (or wraps) a triton-go APIError with
// status and, when code is not "", that code.
func wantAPIError(t *testing.T, err error, status int, code string) {
	t.Helper()
	// triton-go wraps with github.com/pkg/errors v0.8, which has Cause but
	// no Unwrap.
	var c interface{ Cause() error }
	for errors.As(err, &c) {
		err = c.Cause()
	}
	var ae *tritonerrors.APIError
	if !errors.As(err, &ae) {
		t.Fatalf("err = %v, want an APIError with status %d", err, status)
	}
	if ae.StatusCode != status || code != "" && ae.Code != code {
		t.Fatalf("err = %d %s (%v), want %d %s", ae.StatusCode, ae.Code, err, status, code)
	}
}

func ctx() context.Context { return context.Background() }

// get is an unauthenticated GET of the simulator.
func get(t *testing.T, url string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = resp.Body.Close() })
	return resp
}

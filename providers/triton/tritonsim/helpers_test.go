package tritonsim

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"testing"

	triton "github.com/joyent/triton-go"
	"github.com/joyent/triton-go/account"
	"github.com/joyent/triton-go/authentication"
	"github.com/joyent/triton-go/client"
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

// call sends method path (the whole path: "/my/..." is one) with body as
// JSON, as node-triton sends its requests, through triton-go's own
// client, which signs it; into, when not nil, gets the JSON answer. It
// returns the answer (its body read) or triton-go's error.
func call(t *testing.T, c clients, method, path string, body, into any) (*http.Response, error) {
	t.Helper()
	resp, err := c.compute.Client.ExecuteRequestRaw(ctx(), client.RequestInput{Method: method, Path: path, Body: body})
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if into != nil {
		if err := json.NewDecoder(resp.Body).Decode(into); err != nil {
			t.Fatalf("%s %s: decoding the answer: %v", method, path, err)
		}
	}
	return resp, nil
}

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

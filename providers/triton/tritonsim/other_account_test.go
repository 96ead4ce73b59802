package tritonsim

import (
	"crypto/rand"
	"crypto/rsa"
	"net/http"
	"testing"

	triton "github.com/joyent/triton-go"
	"github.com/joyent/triton-go/authentication"
	"github.com/joyent/triton-go/compute"
)

// TestOtherAccountSeesOnlyItsMachines: triton-go signing with the other
// account's key, on the same URL, lists only that account's machine and
// gets 404 ResourceNotFound for this account's; this account's key still
// sees only its own; either key under the other's path is 403.
func TestOtherAccountSeesOnlyItsMachines(t *testing.T) {
	s, mine := setup(t, Options{})
	m := s.AddMachine(Machine{Name: "node-0"})
	o := s.OtherAccountServer()
	if s.OtherAccountServer() != o {
		t.Fatal("a second call made another account")
	}
	if o.AccountID() == s.AccountID() || o.KeyFingerprint() == s.KeyFingerprint() {
		t.Fatalf("the other account shares this one's UUID %s or key %s", s.AccountID(), s.KeyFingerprint())
	}
	otherSigner := signerOf(t, o)
	other := computeAs(t, s, OtherAccountLogin, otherSigner)

	list, err := other.Instances().List(ctx(), &compute.ListInstancesInput{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].Name != OtherMachineName {
		t.Fatalf("the other account lists %+v, want only %s", list, OtherMachineName)
	}
	otherID := list[0].ID
	if otherID == m.ID || list[0].PrimaryIP == m.NICs[0].IP {
		t.Errorf("the other account's machine %s (%s) has this account's ID or address", otherID, list[0].PrimaryIP)
	}
	_, err = other.Instances().Get(ctx(), &compute.GetInstanceInput{ID: m.ID})
	wantAPIError(t, err, http.StatusNotFound, codeNotFound)

	list, err = mine.compute.Instances().List(ctx(), &compute.ListInstancesInput{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].ID != m.ID {
		t.Errorf("this account lists %+v, want only node-0", list)
	}
	_, err = mine.compute.Instances().Get(ctx(), &compute.GetInstanceInput{ID: otherID})
	wantAPIError(t, err, http.StatusNotFound, codeNotFound)

	// Each key, under the other account's path: known, but not allowed.
	_, err = computeAs(t, s, OtherAccountLogin, signerOf(t, s)).Instances().Get(ctx(), &compute.GetInstanceInput{ID: otherID})
	wantAPIError(t, err, http.StatusForbidden, codeNotAuthorized)
	_, err = computeAs(t, s, s.Account(), otherSigner).Instances().Get(ctx(), &compute.GetInstanceInput{ID: m.ID})
	wantAPIError(t, err, http.StatusForbidden, codeNotAuthorized)
}

// signerOf is triton-go's PrivateKeySigner for s's account key.
func signerOf(t *testing.T, s *Server) authentication.Signer {
	t.Helper()
	signer, err := authentication.NewPrivateKeySigner(authentication.PrivateKeySignerInput{
		KeyID: s.KeyFingerprint(), PrivateKeyMaterial: s.AccountKeyPEM(), AccountName: s.Account(),
	})
	if err != nil {
		t.Fatal(err)
	}
	return signer
}

// computeAs is a real triton-go compute client for the CloudAPI at s's
// URL, under account's paths, signing with signer.
func computeAs(t *testing.T, s *Server, account string, signer authentication.Signer) *compute.ComputeClient {
	t.Helper()
	cc, err := compute.NewClient(&triton.ClientConfig{TritonURL: s.URL(), AccountName: account, Signers: []authentication.Signer{signer}})
	if err != nil {
		t.Fatal(err)
	}
	return cc
}

// TestMyIsTheCallersAccount: /my/... is the signer's own account's path
// (sdc-cloudapi lib/auth.js loadAccount; docs/index.md's examples use it
// throughout), a sub-user's its account's: triton-go with AccountName
// "my" reads and acts on the machines of the account whose key signs.
func TestMyIsTheCallersAccount(t *testing.T) {
	s, mine := setup(t, Options{ProvisioningReads: 1})
	m := s.AddMachine(Machine{Name: "node-0"})
	my := computeAs(t, s, MyAccount, signerOf(t, s))
	list, err := my.Instances().List(ctx(), &compute.ListInstancesInput{})
	if err != nil || len(list) != 1 || list[0].ID != m.ID {
		t.Fatalf("/my/machines: %+v, %v", list, err)
	}
	if err := my.Instances().Stop(ctx(), &compute.StopInstanceInput{InstanceID: m.ID}); err != nil {
		t.Fatalf("POST /my/machines/{id}?action=stop: %v", err)
	}
	s.Advance()
	if got, _ := s.Machine(m.ID); got.State != StateStopped {
		t.Fatalf("after a stop through /my: %s", got.State)
	}
	var acct accountJSON
	if _, err := call(t, mine, http.MethodGet, "/"+MyAccount, nil, &acct); err != nil || acct.Login != s.Account() {
		t.Fatalf("GET /my: %+v, %v", acct, err)
	}

	o := s.OtherAccountServer()
	list, err = computeAs(t, s, MyAccount, signerOf(t, o)).Instances().List(ctx(), &compute.ListInstancesInput{})
	if err != nil || len(list) != 1 || list[0].Name != OtherMachineName {
		t.Fatalf("/my/machines signed by the other account: %+v, %v", list, err)
	}

	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.AddKey(s.Account(), "operator", &k.PublicKey); err != nil {
		t.Fatal(err)
	}
	list, err = computeAs(t, s, MyAccount, rsaSigner(t, k, s.Account(), "operator")).Instances().List(ctx(), &compute.ListInstancesInput{})
	if err != nil || len(list) != 1 || list[0].ID != m.ID {
		t.Fatalf("/my/machines signed by a sub-user: %+v, %v", list, err)
	}
}

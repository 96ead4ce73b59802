package tritonsim

import (
	"crypto/rand"
	"crypto/rsa"
	"net/http"
	"strings"
	"testing"

	"github.com/joyent/triton-go/account"
	"golang.org/x/crypto/ssh"
)

// TestKeys: ListKeys and GetKey (GET /:login/keys[/:key], by name or
// fingerprint) answer {name, fingerprint (MD5, colon hex), key (OpenSSH)}
// for each key of the account (sdc-cloudapi lib/keys.js translateKey,
// docs/index.md "Keys"); a key CreateKey adds signs requests, named by
// its fingerprint when given no name, and DeleteKey revokes it. Read and
// written with triton-go's account.Keys client.
func TestKeys(t *testing.T) {
	s, c := setup(t, Options{KeyName: "ccm"})
	keys := c.account.Keys()
	list, err := keys.List(ctx(), &account.ListKeysInput{})
	if err != nil {
		t.Fatal(err)
	}
	pub, err := ssh.NewPublicKey(&s.AccountKey().PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.TrimSpace(string(ssh.MarshalAuthorizedKey(pub)))
	if len(list) != 1 || list[0].Name != "ccm" || list[0].Fingerprint != s.KeyFingerprint() || list[0].Key != want {
		t.Fatalf("keys %+v", list)
	}
	for _, ref := range []string{"ccm", s.KeyFingerprint()} {
		if k, err := keys.Get(ctx(), &account.GetKeyInput{KeyName: ref}); err != nil || k.Name != "ccm" {
			t.Fatalf("GET /keys/%s: %+v, %v", ref, k, err)
		}
	}
	_, err = keys.Get(ctx(), &account.GetKeyInput{KeyName: "nope"})
	wantAPIError(t, err, http.StatusNotFound, "ResourceNotFound")

	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	kPub, err := ssh.NewPublicKey(&k.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	added, err := keys.Create(ctx(), &account.CreateKeyInput{Key: string(ssh.MarshalAuthorizedKey(kPub))})
	if err != nil {
		t.Fatal(err)
	}
	if added.Name != ssh.FingerprintLegacyMD5(kPub) || added.Fingerprint != added.Name {
		t.Fatalf("a key added without a name: %+v, want its fingerprint as its name", added)
	}
	_, err = keys.Create(ctx(), &account.CreateKeyInput{Name: "again", Key: string(ssh.MarshalAuthorizedKey(kPub))})
	wantAPIError(t, err, http.StatusConflict, "InvalidArgument")
	_, err = keys.Create(ctx(), &account.CreateKeyInput{Name: "junk", Key: "not a key"})
	wantAPIError(t, err, http.StatusConflict, "InvalidArgument")

	byNewKey := connectWith(t, s, rsaSigner(t, k, s.Account(), ""))
	if _, err := byNewKey.account.Get(ctx(), &account.GetInput{}); err != nil {
		t.Fatalf("signed with the added key: %v", err)
	}
	if err := keys.Delete(ctx(), &account.DeleteKeyInput{KeyName: added.Fingerprint}); err != nil {
		t.Fatal(err)
	}
	_, err = byNewKey.account.Get(ctx(), &account.GetInput{})
	wantAPIError(t, err, http.StatusUnauthorized, "InvalidCredentials")
	if got := s.Keys(); len(got) != 1 || got[0].Name != "ccm" {
		t.Fatalf("keys after delete %+v", got)
	}
}

// TestAddKeyAndRotateAreListed: a key AddKey gives the account is listed
// by its fingerprint, RemoveKey unlists it, and RotateAccountKey puts the
// new account key in the old one's place and name.
func TestAddKeyAndRotateAreListed(t *testing.T) {
	s := NewServer(t, Options{})
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	md5, _, err := s.AddKey(s.Account(), "", &k.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Keys(); len(got) != 2 || got[1].Name != md5 {
		t.Fatalf("keys %+v", got)
	}
	s.RemoveKey(s.Account(), "", md5)
	if err := s.RotateAccountKey(NewAccountKey()); err != nil {
		t.Fatal(err)
	}
	if got := s.Keys(); len(got) != 1 || got[0].Name != DefaultKeyName || got[0].Fingerprint != s.KeyFingerprint() {
		t.Fatalf("keys after a removal and a rotation %+v", got)
	}
}

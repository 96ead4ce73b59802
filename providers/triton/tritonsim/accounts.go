package tritonsim

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	_ "embed"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// defaultKeyPEM is the account key when Options.PrivateKeyPEM is nil: a
// fixed key (Go's RSA key generation ignores seeded readers), so every run
// signs with the same fingerprint and no test waits for a 2048-bit key.
//
//go:embed account_key.pem
var defaultKeyPEM []byte

// accountKey is the account's RSA key, as the provider reads it
// (TRITON_KEY_MATERIAL, TRITON_KEY_ID).
type accountKey struct {
	private     *rsa.PrivateKey
	pem         []byte
	md5, sha256 string
}

// loadAccountKey reads an RSA key in PKCS #1 PEM.
func loadAccountKey(data []byte) (accountKey, error) {
	block, _ := pem.Decode(data)
	if block == nil || block.Type != "RSA PRIVATE KEY" {
		return accountKey{}, errors.New("the account key is not a PKCS #1 (RSA PRIVATE KEY) PEM block")
	}
	k, err := x509.ParsePKCS1PrivateKey(block.Bytes)
	if err != nil {
		return accountKey{}, fmt.Errorf("the account key: %w", err)
	}
	pub, err := ssh.NewPublicKey(&k.PublicKey)
	if err != nil {
		return accountKey{}, fmt.Errorf("the account key: %w", err)
	}
	return accountKey{private: k, pem: pem.EncodeToMemory(block),
		md5: ssh.FingerprintLegacyMD5(pub), sha256: ssh.FingerprintSHA256(pub)}, nil
}

// NewAccountKey returns a new RSA key (2048 bits) in PKCS #1 PEM, the
// form of the account key, for RotateAccountKey.
func NewAccountKey() []byte {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		panic("tritonsim: " + err.Error())
	}
	return pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)})
}

// RotateAccountKey makes keyPEM, an RSA key in PKCS #1 PEM (NewAccountKey
// makes one), the account key, as an operator rotates the key the CCM
// signs with: the account accepts the new key's signatures from now on,
// and no longer the old key's, which ListKeys lists no more (the new one
// takes its name). AccountKey, AccountKeyPEM, the fingerprints and Env
// give the new key.
func (s *Server) RotateAccountKey(keyPEM []byte) error {
	key, err := loadAccountKey(keyPEM)
	if err != nil {
		return err
	}
	pub, err := ssh.NewPublicKey(&key.private.PublicKey)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.key
	name := DefaultKeyName
	if i := slices.IndexFunc(s.st.keys, func(k *Key) bool { return k.Fingerprint == old.md5 }); i >= 0 {
		name = s.st.keys[i].Name
		// Off the list first, so the new key may take its name; the old
		// key signs until the new one does.
		s.st.keys = slices.Delete(s.st.keys, i, i+1)
	}
	if key.md5 != old.md5 {
		s.removeAccountKey(key.md5) // added before with AddKey: it takes the account key's name now
	}
	if _, err := s.addAccountKey(name, pub); err != nil {
		return err
	}
	s.key = key
	if old.md5 != key.md5 {
		s.sig.RemoveKey(s.opts.Account, "", old.md5)
	}
	return nil
}

// currentKey is the account key now.
func (s *Server) currentKey() accountKey {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.key
}

// AccountKey is the account's RSA private key: what the provider signs
// with.
func (s *Server) AccountKey() *rsa.PrivateKey { return s.currentKey().private }

// AccountKeyPEM is the account key in PKCS #1 PEM, as TRITON_KEY_MATERIAL
// holds it.
func (s *Server) AccountKeyPEM() []byte { return append([]byte(nil), s.currentKey().pem...) }

// KeyFingerprint is the account key's MD5 fingerprint (colon-separated
// hex), as TRITON_KEY_ID holds it and triton-go's signer wants it.
func (s *Server) KeyFingerprint() string { return s.currentKey().md5 }

// KeyFingerprintSHA256 is the account key's SHA256 fingerprint
// ("SHA256:..."), which keyIds may give too.
func (s *Server) KeyFingerprintSHA256() string { return s.currentKey().sha256 }

// AddKey lets user of account (the account itself for "") sign requests
// with the private half of pub: an *rsa.PublicKey, *ecdsa.PublicKey,
// ed25519.PublicKey or ssh.PublicKey. It returns the key's MD5 and SHA256
// fingerprints. Only the account's own login reaches its resources. A key
// of this account itself is listed by ListKeys, named by its fingerprint
// (as CloudAPI names a key uploaded without a name); adding it twice is an
// error.
func (s *Server) AddKey(account, user string, pub any) (md5, sha256 string, err error) {
	if account != s.opts.Account || user != "" {
		return s.sig.AddKey(account, user, pub)
	}
	sshPub, isSSH := pub.(ssh.PublicKey)
	if !isSSH {
		if sshPub, err = ssh.NewPublicKey(pub); err != nil {
			return "", "", fmt.Errorf("signing key: %w", err)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	k, err := s.addAccountKey("", sshPub)
	if err != nil {
		return "", "", err
	}
	return k.Fingerprint, k.sha256, nil
}

// RemoveKey revokes a key AddKey added (or the account key), by either
// fingerprint.
func (s *Server) RemoveKey(account, user, fingerprint string) {
	if account != s.opts.Account || user != "" {
		s.sig.RemoveKey(account, user, fingerprint)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.removeAccountKey(fingerprint)
}

// SetCNSEnabled sets the account's triton_cns_enabled: with it off, CNS
// publishes no names for the account's machines (but those with
// triton.cns.reverse_ptr keep their instance names).
func (s *Server) SetCNSEnabled(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.st.cnsEnabled = on
	s.st.accountUpdated = s.st.now()
}

// accountJSON is the account as GetAccount serves it (triton-go's
// account.Account).
type accountJSON struct {
	ID               string    `json:"id"`
	Login            string    `json:"login"`
	Email            string    `json:"email"`
	CompanyName      string    `json:"companyName"`
	FirstName        string    `json:"firstName"`
	LastName         string    `json:"lastName"`
	PostalCode       string    `json:"postalCode"`
	City             string    `json:"city"`
	Country          string    `json:"country"`
	Phone            string    `json:"phone"`
	Created          time.Time `json:"created"`
	Updated          time.Time `json:"updated"`
	TritonCNSEnabled bool      `json:"triton_cns_enabled"`
}

func (s *Server) getAccount(*http.Request) simkit.Response {
	return ok(accountJSON{
		ID: s.st.accountID, Login: s.opts.Account, Email: s.opts.Account + "@example.com",
		CompanyName: "ccmkit", FirstName: "Cloud", LastName: "Controller", PostalCode: "94107",
		City: "San Francisco", Country: "USA", Phone: "+1 555 0100",
		Created: epoch, Updated: s.st.accountUpdated, TritonCNSEnabled: s.st.cnsEnabled,
	})
}

// ping serves GET /--ping, unauthenticated, as CloudAPI does: the
// versions it speaks and the Triton-Datacenter-Name header.
func (s *Server) ping(*http.Request) simkit.Response {
	resp := ok(map[string]any{"ping": "pong", "cloudapi": map[string]any{"versions": []string{"9.20.0"}}})
	resp.Header = http.Header{"Triton-Datacenter-Name": {s.opts.Datacenter}}
	return resp
}

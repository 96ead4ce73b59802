package tritonsim

import (
	"crypto/rsa"
	"crypto/x509"
	_ "embed"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
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

func loadAccountKey(data []byte) (accountKey, error) {
	if data == nil {
		data = defaultKeyPEM
	}
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

// AccountKey is the account's RSA private key: what the provider signs
// with.
func (s *Server) AccountKey() *rsa.PrivateKey { return s.key.private }

// AccountKeyPEM is the account key in PKCS #1 PEM, as TRITON_KEY_MATERIAL
// holds it.
func (s *Server) AccountKeyPEM() []byte { return append([]byte(nil), s.key.pem...) }

// KeyFingerprint is the account key's MD5 fingerprint (colon-separated
// hex), as TRITON_KEY_ID holds it and triton-go's signer wants it.
func (s *Server) KeyFingerprint() string { return s.key.md5 }

// KeyFingerprintSHA256 is the account key's SHA256 fingerprint
// ("SHA256:..."), which keyIds may give too.
func (s *Server) KeyFingerprintSHA256() string { return s.key.sha256 }

// AddKey lets user of account (the account itself for "") sign requests
// with the private half of pub: an *rsa.PublicKey, *ecdsa.PublicKey,
// ed25519.PublicKey or ssh.PublicKey. It returns the key's MD5 and SHA256
// fingerprints. Only the account's own login reaches its resources.
func (s *Server) AddKey(account, user string, pub any) (md5, sha256 string, err error) {
	return s.sig.AddKey(account, user, pub)
}

// RemoveKey revokes a key AddKey added (or the account key), by either
// fingerprint.
func (s *Server) RemoveKey(account, user, fingerprint string) {
	s.sig.RemoveKey(account, user, fingerprint)
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

package cloud

import (
	"crypto"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"path"
	"sync"

	"github.com/joyent/triton-go/authentication"
)

// Signer is the triton-go authentication.Signer that signs every CloudAPI
// request with the account's key, whatever its form (keys.go). It signs
// the Date header as CloudAPI verifies it: rsa-sha256 for RSA keys,
// ecdsa-sha256/384/512 by curve, ed25519-sha512; the keyId is
// /<account>/keys/<md5> or, for an RBAC sub-user, /<account>/users/<user>/keys/<md5>,
// the MD5 fingerprint being what CloudAPI looks keys up by (node-triton
// sends it whatever fingerprint its user configured).
//
// The key is read again when TRITON_KEY_MATERIAL_FILE changes (a rotated
// Kubernetes Secret), so a new key applies at the next request without a
// restart; the fingerprint in the keyId is always the key's own.
type Signer struct {
	account, user string
	// material returns TRITON_KEY_MATERIAL as it is now.
	material func() (string, error)

	mu   sync.Mutex
	text string // the material key was parsed from
	key  *PrivateKey
}

var _ authentication.Signer = (*Signer)(nil)

// NewSigner returns a signer for cr's key, checking now that the key
// parses and that TRITON_KEY_ID, when set, is its fingerprint.
func NewSigner(cr *Credentials) (*Signer, error) {
	s := &Signer{account: cr.Account, user: cr.User, material: cr.KeyMaterial.Reveal}
	k, err := s.Current()
	if err != nil {
		return nil, err
	}
	if err := k.checkKeyID(cr.KeyID); err != nil {
		return nil, err
	}
	return s, nil
}

// Current returns the key as TRITON_KEY_MATERIAL holds it now, parsing it
// again only when the material changed.
func (s *Signer) Current() (*PrivateKey, error) {
	text, err := s.material()
	if err != nil {
		return nil, fmt.Errorf("TRITON_KEY_MATERIAL: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.key != nil && text == s.text {
		return s.key, nil
	}
	b, err := KeyText(text)
	if err != nil {
		return nil, err
	}
	k, err := ParsePrivateKey(b)
	if err != nil {
		return nil, fmt.Errorf("TRITON_KEY_MATERIAL: %w", err)
	}
	s.text, s.key = text, k
	return k, nil
}

// KeyText is the text of the key Current last parsed (KeyText of the
// TRITON_KEY_MATERIAL it read then): the CCM's Secret completion stores
// it.
func (s *Signer) KeyText() ([]byte, error) {
	s.mu.Lock()
	text := s.text
	s.mu.Unlock()
	return KeyText(text)
}

// Sign implements authentication.Signer: the whole Authorization header
// value for a request whose Date header is dateHeader.
func (s *Signer) Sign(dateHeader string, isManta bool) (string, error) {
	k, err := s.Current()
	if err != nil {
		return "", err
	}
	sig, err := k.sign("date: " + dateHeader)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf(`Signature keyId="%s",algorithm="%s",headers="date",signature="%s"`,
		s.keyID(k, isManta), k.Algorithm, sig), nil
}

// SignRaw implements authentication.Signer: the base64 signature of
// toSign and its algorithm.
func (s *Signer) SignRaw(toSign string) (signature, algorithm string, err error) {
	k, err := s.Current()
	if err != nil {
		return "", "", err
	}
	sig, err := k.sign(toSign)
	return sig, k.Algorithm, err
}

// KeyFingerprint implements authentication.Signer: the key's MD5
// fingerprint, or "" when the key cannot be read.
func (s *Signer) KeyFingerprint() string {
	if k, err := s.Current(); err == nil {
		return k.MD5
	}
	return ""
}

// DefaultAlgorithm implements authentication.Signer.
func (s *Signer) DefaultAlgorithm() string {
	if k, err := s.Current(); err == nil {
		return k.Algorithm
	}
	return ""
}

// keyID is the keyId parameter: CloudAPI's /<account>[/users/<user>]/keys/<fp>,
// or Manta's /<account>[/<user>]/keys/<fp>, as triton-go writes them.
func (s *Signer) keyID(k *PrivateKey, isManta bool) string {
	switch {
	case s.user == "":
		return path.Join("/", s.account, "keys", k.MD5)
	case isManta:
		return path.Join("/", s.account, s.user, "keys", k.MD5)
	}
	return path.Join("/", s.account, "users", s.user, "keys", k.MD5)
}

// sign returns the base64 signature of data.
func (k *PrivateKey) sign(data string) (string, error) {
	msg := []byte(data)
	if k.hash != 0 {
		h := k.hash.New()
		h.Write(msg)
		msg = h.Sum(nil)
	}
	var opts crypto.SignerOpts = k.hash // crypto.Hash(0) for Ed25519
	sig, err := k.Signer.Sign(rand.Reader, msg, opts)
	if err != nil {
		return "", fmt.Errorf("signing the request: %w", err)
	}
	return base64.StdEncoding.EncodeToString(sig), nil
}

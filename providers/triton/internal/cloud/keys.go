package cloud

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/crypto/ssh"
)

// This file reads the account's SSH key as its user has it, which
// triton-go's own PrivateKeySigner does not (PKCS#1 RSA only): OpenSSH
// ("BEGIN OPENSSH PRIVATE KEY"), PKCS#1 and PKCS#8 RSA, ECDSA (SEC1 "BEGIN
// EC PRIVATE KEY" and PKCS#8) and Ed25519 (OpenSSH and PKCS#8), found by
// its fingerprint in either of the forms CloudAPI and ssh-keygen print.
// No error quotes the key.

// PrivateKey is a parsed account key and what identifies it.
type PrivateKey struct {
	// Signer is the key (the CCM's metrics controller also signs its
	// CMON client certificates with it).
	Signer crypto.Signer
	// hash is what the key signs the digest of (0 for Ed25519, which signs
	// the message itself); Algorithm is the HTTP Signature algorithm name.
	hash      crypto.Hash
	Algorithm string
	// MD5 is the legacy fingerprint as CloudAPI lists it (colon hex),
	// SHA256 the "SHA256:<base64>" one ssh-keygen prints.
	MD5, SHA256 string
}

// ParsePrivateKey parses an unencrypted private key in PEM or OpenSSH form.
func ParsePrivateKey(text []byte) (*PrivateKey, error) {
	if block, _ := pem.Decode(text); block != nil && block.Type == "ENCRYPTED PRIVATE KEY" {
		return nil, errEncryptedKey
	}
	raw, err := ssh.ParseRawPrivateKey(text)
	if err != nil {
		var missing *ssh.PassphraseMissingError
		if errors.As(err, &missing) {
			return nil, errEncryptedKey
		}
		// x/crypto/ssh's parse errors name the format, never the bytes.
		return nil, fmt.Errorf("not a private key ccmkit reads (OpenSSH, or PEM PKCS#1, PKCS#8 or SEC1; RSA, ECDSA or Ed25519): %w", err)
	}
	k := &PrivateKey{}
	switch key := raw.(type) {
	case *rsa.PrivateKey:
		// CloudAPI (node-http-signature) verifies rsa-sha256, as node-triton signs.
		k.Signer, k.hash, k.Algorithm = key, crypto.SHA256, "rsa-sha256"
	case *ecdsa.PrivateKey:
		if k.hash, err = ecdsaHash(key.Curve); err != nil {
			return nil, err
		}
		k.Signer, k.Algorithm = key, "ecdsa-"+hashName(k.hash)
	case ed25519.PrivateKey:
		k.Signer, k.Algorithm = key, "ed25519-sha512"
	case *ed25519.PrivateKey: // OpenSSH-format Ed25519 keys parse to a pointer
		k.Signer, k.Algorithm = *key, "ed25519-sha512"
	default:
		return nil, fmt.Errorf("a %T key: CloudAPI takes RSA, ECDSA or Ed25519 keys", raw)
	}
	pub, err := ssh.NewPublicKey(k.Signer.Public())
	if err != nil {
		return nil, fmt.Errorf("deriving the public key: %w", err)
	}
	k.MD5 = ssh.FingerprintLegacyMD5(pub)
	k.SHA256 = ssh.FingerprintSHA256(pub)
	return k, nil
}

var errEncryptedKey = errors.New("the key is encrypted: give the CCM an unencrypted copy (ssh-keygen -p -N '' -f <copy> removes the passphrase)")

// ecdsaHash is the hash an ECDSA key signs with, by its curve, as
// node-http-signature names them (ecdsa-sha256 for P-256 and so on).
func ecdsaHash(c elliptic.Curve) (crypto.Hash, error) {
	switch c {
	case elliptic.P256():
		return crypto.SHA256, nil
	case elliptic.P384():
		return crypto.SHA384, nil
	case elliptic.P521():
		return crypto.SHA512, nil
	}
	return 0, fmt.Errorf("an ECDSA key on curve %s: CloudAPI takes P-256, P-384 and P-521", c.Params().Name)
}

func hashName(h crypto.Hash) string {
	switch h {
	case crypto.SHA384:
		return "sha384"
	case crypto.SHA512:
		return "sha512"
	}
	return "sha256"
}

// matches reports whether keyID is one of k's fingerprints: MD5 in hex,
// colons optional, with or without "MD5:" (CloudAPI's and triton-go's
// form), or "SHA256:<base64>" (ssh-keygen's), padding optional.
func (k *PrivateKey) matches(keyID string) bool {
	keyID = strings.TrimSpace(keyID)
	if rest, ok := strings.CutPrefix(keyID, "SHA256:"); ok {
		return strings.TrimRight(rest, "=") == strings.TrimRight(strings.TrimPrefix(k.SHA256, "SHA256:"), "=")
	}
	rest := strings.TrimPrefix(strings.TrimPrefix(keyID, "MD5:"), "md5:")
	return strings.EqualFold(strings.ReplaceAll(rest, ":", ""), strings.ReplaceAll(k.MD5, ":", ""))
}

// checkKeyID returns an error, naming TRITON_KEY_ID, when keyID is set and
// is not k's fingerprint. Fingerprints are public: the error shows them.
func (k *PrivateKey) checkKeyID(keyID string) error {
	if keyID == "" || k.matches(keyID) {
		return nil
	}
	return fmt.Errorf("TRITON_KEY_ID: %s is not the fingerprint of the key in TRITON_KEY_MATERIAL (its fingerprints are %s and %s): set the key's fingerprint, or leave TRITON_KEY_ID unset", keyID, k.MD5, k.SHA256)
}

// KeyText returns the key TRITON_KEY_MATERIAL holds: its value when that is
// the key itself (PEM or OpenSSH text), else the content of the file it
// names, as triton-go's examples read the variable. A leading "~/" is the
// home directory.
func KeyText(material string) ([]byte, error) {
	if strings.Contains(material, "-----BEGIN") {
		return []byte(material), nil
	}
	path := strings.TrimSpace(material)
	if rest, ok := strings.CutPrefix(path, "~/"); ok {
		home, err := os.UserHomeDir()
		if err != nil {
			return nil, fmt.Errorf("TRITON_KEY_MATERIAL: expanding ~ in the key file's path: %w", err)
		}
		path = filepath.Join(home, rest)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		// Only the cause: the value is not a key (no BEGIN line), but it
		// could still be a garbled one, so it is not shown as a path.
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, fmt.Errorf("TRITON_KEY_MATERIAL: neither a PEM or OpenSSH private key nor the path of a readable file holding one (%w)", err)
	}
	return b, nil
}

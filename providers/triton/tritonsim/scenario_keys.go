package tritonsim

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"slices"
	"strings"

	"golang.org/x/crypto/ssh"
)

// ScenarioKey is a key of a Scenario's account besides the account key,
// which signs requests as the account key does and ListKeys lists. It is
// given by exactly one of:
//
//   - publicKey: an OpenSSH public key ("ssh-ed25519 AAAA... comment"),
//     whose private half the user holds;
//   - privateKey: a private key in PEM (PKCS #1, SEC 1, PKCS #8 or
//     OpenSSH), which the scenario then holds;
//   - generate: rsa (2048 bits), ecdsa (P-256) or ed25519, a new key each
//     run, whose private half is written to keyFile (mode 0600; RSA in
//     PKCS #1, ECDSA in SEC 1, Ed25519 in OpenSSH form, each as ssh-add
//     and triton-go take it). keyFile defaults to the account key's file
//     with -<name> before .pem.
type ScenarioKey struct {
	Name       string `json:"name,omitempty"`
	PublicKey  string `json:"publicKey,omitempty"`
	PrivateKey string `json:"privateKey,omitempty"`
	Generate   string `json:"generate,omitempty"`
	KeyFile    string `json:"keyFile,omitempty"`
}

// keyTypes are what generate takes.
var keyTypes = []string{"rsa", "ecdsa", "ed25519"}

// validate reports what is wrong with k, before any key is made.
func (k ScenarioKey) validate() error {
	given := 0
	for _, v := range []string{k.PublicKey, k.PrivateKey, k.Generate} {
		if v != "" {
			given++
		}
	}
	switch {
	case given != 1:
		return errors.New("give exactly one of publicKey, privateKey and generate")
	case k.Generate != "" && !slices.Contains(keyTypes, k.Generate):
		return fmt.Errorf("generate: %q is not one of %v", k.Generate, keyTypes)
	case k.Generate != "" && k.Name == "":
		return errors.New("name: required for a generated key (it names its keyFile)")
	case k.KeyFile != "" && k.Generate == "":
		return errors.New("keyFile: only for a generated key")
	case strings.ContainsAny(k.Name, "/"):
		return fmt.Errorf("name: %q holds a /", k.Name)
	}
	return nil
}

// resolve returns k's public key, and for a generated key its private
// half in PEM.
func (k ScenarioKey) resolve() (ssh.PublicKey, []byte, error) {
	switch {
	case k.PublicKey != "":
		pub, _, _, _, err := ssh.ParseAuthorizedKey([]byte(k.PublicKey))
		if err != nil {
			return nil, nil, fmt.Errorf("publicKey: %w", err)
		}
		return pub, nil, nil
	case k.PrivateKey != "":
		priv, err := ssh.ParseRawPrivateKey([]byte(k.PrivateKey))
		if err != nil {
			return nil, nil, fmt.Errorf("privateKey: %w", err)
		}
		return publicOf(priv)
	}
	priv, privPEM, err := generateKey(k.Generate)
	if err != nil {
		return nil, nil, err
	}
	pub, _, err := publicOf(priv)
	return pub, privPEM, err
}

// publicOf is the SSH public key of a private key ssh.ParseRawPrivateKey
// returned.
func publicOf(priv any) (ssh.PublicKey, []byte, error) {
	if p, isPtr := priv.(*ed25519.PrivateKey); isPtr {
		priv = *p
	}
	s, isSigner := priv.(crypto.Signer)
	if !isSigner {
		return nil, nil, fmt.Errorf("privateKey: %T keys are not supported", priv)
	}
	pub, err := ssh.NewPublicKey(s.Public())
	return pub, nil, err
}

// generateKey makes a key of the type and its PEM.
func generateKey(typ string) (crypto.Signer, []byte, error) {
	switch typ {
	case "rsa":
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			return nil, nil, err
		}
		return k, pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)}), nil
	case "ecdsa":
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return nil, nil, err
		}
		der, err := x509.MarshalECPrivateKey(k)
		if err != nil {
			return nil, nil, err
		}
		return k, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), nil
	default:
		_, k, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			return nil, nil, err
		}
		block, err := ssh.MarshalPrivateKey(k, "")
		if err != nil {
			return nil, nil, err
		}
		return k, pem.EncodeToMemory(block), nil
	}
}

// addScenarioKey adds k to the account; keyFile is where a generated
// key's private half goes.
func (s *Server) addScenarioKey(k ScenarioKey, keyFile string) error {
	pub, privPEM, err := k.resolve()
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	added, err := s.addAccountKey(k.Name, pub)
	if err != nil {
		return err
	}
	if privPEM != nil {
		added.privatePEM, added.keyFile = privPEM, keyFile
	}
	return nil
}

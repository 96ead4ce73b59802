package frameworktest

import (
	"maps"
	"os"
	"path/filepath"
	"testing"

	"github.com/ccmkit/ccmkit/framework"
)

// SecretRotator is a Cloud whose credential can change, for
// RunSecretRotation.
type SecretRotator interface {
	// RotateSecret makes the cloud accept secret as the provider's
	// credential, and no longer the one it accepted before.
	RotateSecret(secret string)
}

// SecretMinter is a SecretRotator whose credentials have a form of their
// own, such as a private key, for RunSecretRotation: NewSecret returns a
// new valid credential, one the cloud does not accept yet, to rotate to.
// A cloud whose credentials are opaque strings need not be one: it is
// rotated to the old credential with "-rotated" appended.
type SecretMinter interface {
	NewSecret() string
}

// RunSecretRotation checks that the provider h sets up reads its
// credential from a file, as a Secret volume mounts it, and re-reads the
// file when it changes. secretVar is the setting of Target.Env that holds
// the credential; the provider must take a file's path in secretVar+"_FILE"
// instead (a config.Secret does), and Target.Cloud must be a SecretRotator
// (and a SecretMinter if not every string is a credential).
//
// It rotates the credential the way the kubelet updates a Secret volume (a
// new file renamed over the old): the cloud first, when a lookup must fail
// with an error that is not not-found, then the file, when the very next
// lookup must succeed, with no restart.
func RunSecretRotation(t *testing.T, h Harness, secretVar string) {
	t.Helper()
	target := h.Setup(t)
	rotator, ok := target.Cloud.(SecretRotator)
	if !ok {
		t.Fatalf("the harness's Cloud (%T) is not a SecretRotator", target.Cloud)
	}
	secret := target.Env[secretVar]
	if secret == "" {
		t.Fatalf("the harness's Env has no %s", secretVar)
	}
	id := target.Cloud.AddInstance("node-1")
	path := filepath.Join(t.TempDir(), "secret")
	WriteAtomically(t, path, secret+"\n")
	target.Env = maps.Clone(target.Env)
	delete(target.Env, secretVar)
	target.Env[secretVar+"_FILE"] = path

	s := newSuiteFor(t, target, variant{})
	ip, ok := s.cloud.Provider().(framework.InstancesProvider)
	if !ok {
		t.Fatalf("provider %s has no instances to look up", target.Provider.Name())
	}
	instances := ip.Instances()
	if _, err := instances.InstanceByID(s.ctx, id); err != nil {
		t.Fatalf("with the secret from %s_FILE: %v", secretVar, err)
	}

	rotated := nextSecret(target.Cloud, secret)
	if rotated == secret {
		t.Fatalf("the credential to rotate to is the one %s holds", secretVar)
	}
	rotator.RotateSecret(rotated) // the cloud rotates first...
	if _, err := instances.InstanceByID(s.ctx, id); err == nil || framework.IsNotFound(err) {
		t.Fatalf("with the old secret: err = %v, want an authorization error that is not not-found", err)
	}
	WriteAtomically(t, path, rotated+"\n") // ...then the Secret volume follows
	if _, err := instances.InstanceByID(s.ctx, id); err != nil {
		t.Fatalf("with the rotated secret: %v", err)
	}
}

// nextSecret is the credential to rotate secret to: a new one the cloud
// mints, if it is a SecretMinter.
func nextSecret(cloud Cloud, secret string) string {
	if m, ok := cloud.(SecretMinter); ok {
		return m.NewSecret()
	}
	return secret + "-rotated"
}

// WriteAtomically replaces path's content as the kubelet updates a Secret
// volume: a new file renamed over the old.
func WriteAtomically(t *testing.T, path, content string) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

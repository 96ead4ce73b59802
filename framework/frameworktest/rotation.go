package frameworktest

import (
	"context"
	"crypto/rand"
	"maps"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2/ktesting"

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
	rotator := rotatorOf(t, target)
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
	next := func() string {
		rotated := nextSecret(target.Cloud, secret)
		if rotated == secret {
			t.Fatalf("the credential to rotate to is the one %s holds", secretVar)
		}
		return rotated
	}
	checkRotation(t, s.ctx, s.cloud.Cloud, target, rotator, id, secretVar+"_FILE", next, func(rotated string) {
		WriteAtomically(t, path, rotated+"\n")
	})
}

// RunCloudConfigRotation is RunSecretRotation for a provider whose
// credential is a setting of its --cloud-config file (OpenStack's
// cloud.conf [Global] password), which a Secret volume mounts whole, so
// the provider must notice a changed file and use the credential it then
// holds. rewrite returns conf, a --cloud-config file's content, with the
// credential set to secret; Target.CloudConfig is the file's content at
// start-up, and Target.Cloud must be a SecretRotator (and a SecretMinter
// if not every string is a credential).
//
// It rotates the credential as RunSecretRotation does: the cloud first,
// when a lookup must fail with an error that is not not-found, then the
// file, rewritten as the kubelet updates a Secret volume (a new file
// renamed over the old), when the very next lookup must succeed, with no
// restart.
func RunCloudConfigRotation(t *testing.T, h Harness, rewrite func(conf, secret string) string) {
	t.Helper()
	target := h.Setup(t)
	rotator := rotatorOf(t, target)
	conf := target.CloudConfig
	if conf == "" {
		t.Fatal("the harness's Target has no CloudConfig")
	}
	secret := newSecret(target.Cloud)
	if rewrite(conf, secret) == conf {
		t.Fatal("rewrite left the cloud config as it was: it holds no credential to rotate")
	}
	id := target.Cloud.AddInstance("node-1")
	path := filepath.Join(t.TempDir(), "cloud.conf")
	WriteAtomically(t, path, conf)

	_, ctx := ktesting.NewTestContext(t)
	started := *target
	started.CloudConfig = "" // newEnv writes none: the provider reads path
	env := newEnv(t, &started, fake.NewClientset(), record.NewFakeRecorder(1000), variant{})
	env.CloudConfigFile = path
	cloud, err := framework.NewCloud(ctx, target.Provider, env)
	if err != nil {
		t.Fatalf("framework.NewCloud: %v", err)
	}
	next := func() string { return secret }
	checkRotation(t, ctx, cloud, target, rotator, id, "the cloud config", next, func(rotated string) {
		WriteAtomically(t, path, rewrite(conf, rotated))
	})
}

// rotatorOf is target's Cloud as a SecretRotator, failing the test if it
// is not one.
func rotatorOf(t *testing.T, target *Target) SecretRotator {
	t.Helper()
	rotator, ok := target.Cloud.(SecretRotator)
	if !ok {
		t.Fatalf("the harness's Cloud (%T) is not a SecretRotator", target.Cloud)
	}
	return rotator
}

// checkRotation looks instance id up with the credential from (what
// names the file), rotates the cloud's credential to next's (the lookup
// must fail, and not with not-found), then writes that to the file
// (write): the very next lookup must succeed.
func checkRotation(t *testing.T, ctx context.Context, cloud *framework.Cloud, target *Target, rotator SecretRotator,
	id, from string, next func() string, write func(rotated string)) {
	t.Helper()
	ip, ok := cloud.Provider().(framework.InstancesProvider)
	if !ok {
		t.Fatalf("provider %s has no instances to look up", target.Provider.Name())
	}
	instances := ip.Instances()
	if _, err := instances.InstanceByID(ctx, id); err != nil {
		t.Fatalf("with the secret from %s: %v", from, err)
	}
	rotated := next()
	rotator.RotateSecret(rotated) // the cloud rotates first...
	if _, err := instances.InstanceByID(ctx, id); err == nil || framework.IsNotFound(err) {
		t.Fatalf("with the old secret: err = %v, want an authorization error that is not not-found", err)
	}
	write(rotated) // ...then the Secret volume follows
	if _, err := instances.InstanceByID(ctx, id); err != nil {
		t.Fatalf("with the rotated secret: %v", err)
	}
}

// newSecret is a credential the cloud does not accept yet: one it mints,
// if it is a SecretMinter, else a random string.
func newSecret(cloud Cloud) string {
	if m, ok := cloud.(SecretMinter); ok {
		return m.NewSecret()
	}
	return "rotated-" + rand.Text()
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

package openstack_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	cloudprovider "k8s.io/cloud-provider"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/framework/cloudapi"
	"github.com/ccmkit/ccmkit/framework/frameworktest"
	"github.com/ccmkit/ccmkit/providers/openstack"
	"github.com/ccmkit/ccmkit/providers/openstack/openstacksim"
)

// rotation is a provider started on a cloud.conf the test rewrites as the
// kubelet updates a Secret volume, with its logs kept.
type rotation struct {
	sim  *openstacksim.Server
	path string
	inst cloudprovider.InstancesV2
	ctx  context.Context
	logs func() string
	node *corev1.Node
}

func startRotation(t *testing.T, sim *openstacksim.Server, conf string) *rotation {
	t.Helper()
	logger := ktesting.NewLogger(t, ktesting.NewConfig(ktesting.BufferLogs(true)))
	ctx := klog.NewContext(t.Context(), logger)
	r := &rotation{sim: sim, path: filepath.Join(t.TempDir(), "cloud.conf"), ctx: ctx,
		logs: func() string { return logger.GetSink().(ktesting.Underlier).GetBuffer().String() }}
	frameworktest.WriteAtomically(t, r.path, conf)
	cloud, err := framework.NewCloud(ctx, openstack.New(), &framework.Env{
		ClusterName:      "test-cluster",
		CloudConfigFile:  r.path,
		LookupEnv:        func(string) (string, bool) { return "", false },
		CloudAPI:         cloudapi.Options{MaxRetries: -1, Timeout: 2 * time.Second},
		InstanceCacheTTL: -1,
	})
	if err != nil {
		t.Fatalf("NewCloud: %v", err)
	}
	r.inst, _ = cloud.InstancesV2()
	r.node = node("node-1", "openstack:///"+sim.Cloud().AddInstance("node-1"))
	return r
}

// write replaces the cloud.conf.
func (r *rotation) write(t *testing.T, conf string) {
	t.Helper()
	frameworktest.WriteAtomically(t, r.path, conf)
}

// lookup is a lookup of the node's server, which must succeed.
func (r *rotation) lookup(t *testing.T, when string) *cloudprovider.InstanceMetadata {
	t.Helper()
	md, err := r.inst.InstanceMetadata(r.ctx, r.node)
	if err != nil {
		t.Fatalf("%s: %v", when, err)
	}
	return md
}

// refused is a lookup that Keystone's refusal must fail: the error, not
// a not-found.
func (r *rotation) refused(t *testing.T, when string) error {
	t.Helper()
	ok, err := r.inst.InstanceExists(r.ctx, r.node)
	if err == nil || framework.IsNotFound(err) {
		t.Fatalf("%s: InstanceExists = %v, %v; want an authorization error that is not not-found", when, ok, err)
	}
	return err
}

// checkNoSecret fails if the logs or err hold one of secrets.
func (r *rotation) checkNoSecret(t *testing.T, err error, secrets ...string) {
	t.Helper()
	for _, s := range secrets {
		if strings.Contains(r.logs(), s) {
			t.Errorf("the logs reveal %q", s)
		}
		if err != nil && strings.Contains(err.Error(), s) {
			t.Errorf("the error reveals %q: %v", s, err)
		}
	}
}

// TestCloudConfigRotationApplicationCredential: an application credential
// is rotated as Keystone does it, a new one created and the old one
// deleted (which revokes its tokens), and cloud.conf names the new one.
func TestCloudConfigRotationApplicationCredential(t *testing.T) {
	sim := openstacksim.NewServer(t, openstacksim.Options{ApplicationCredentials: []openstacksim.ApplicationCredential{
		{ID: "ac-1", Secret: "ac-secret-1"}, {ID: "ac-2", Secret: "ac-secret-2"},
	}})
	global := "[Global]\nauth-url = " + sim.AuthURL() + "\nregion = " + sim.Region() + "\n"
	r := startRotation(t, sim, global+"application-credential-id = ac-1\napplication-credential-secret = ac-secret-1\n")
	r.lookup(t, "with ac-1")
	sim.DeleteApplicationCredential("ac-1")
	err := r.refused(t, "with ac-1 deleted")
	r.write(t, global+"application-credential-id = ac-2\napplication-credential-secret = ac-secret-2\n")
	r.lookup(t, "with ac-2 in cloud.conf")
	r.checkNoSecret(t, err, "ac-secret-1", "ac-secret-2")
}

// TestCloudConfigRotationFromPasswordToApplicationCredential: the new
// cloud.conf authenticates another way.
func TestCloudConfigRotationFromPasswordToApplicationCredential(t *testing.T) {
	sim := openstacksim.NewServer(t, openstacksim.Options{ApplicationCredentials: []openstacksim.ApplicationCredential{{ID: "ac-1", Secret: "ac-secret-1"}}})
	r := startRotation(t, sim, sim.CloudConfig())
	r.lookup(t, "with the password")
	sim.SetPassword(openstacksim.DefaultUsername, "pw-2")
	_ = r.refused(t, "with the password changed")
	r.write(t, "[Global]\nauth-url = "+sim.AuthURL()+"\nregion = "+sim.Region()+
		"\napplication-credential-id = ac-1\napplication-credential-secret = ac-secret-1\n")
	r.lookup(t, "with the application credential in cloud.conf")
}

// TestCloudConfigRotationKeepsOtherSettings: the rotated cloud.conf also
// changes settings other than the credentials. The new password is used;
// the other settings keep their start-up values, and the log says which
// take a restart, without a value.
func TestCloudConfigRotationKeepsOtherSettings(t *testing.T) {
	sim := openstacksim.NewServer(t, openstacksim.Options{})
	r := startRotation(t, sim, sim.CloudConfig())
	r.lookup(t, "at start-up")
	sim.SetPassword(openstacksim.DefaultUsername, "pw-2")
	conf := strings.Replace(sim.CloudConfig(), "region = "+sim.Region(), "region = Elsewhere", 1)
	r.write(t, conf+"\n[Metadata]\nsearch-order = metadataService\n")
	if md := r.lookup(t, "with the new password in cloud.conf"); md.Region != sim.Region() {
		t.Errorf("region = %q, want %q, the one at start-up", md.Region, sim.Region())
	}
	logs := r.logs()
	for _, want := range []string{"take effect only after a restart", "[Global] region", "[Metadata] search-order", "changed its credentials"} {
		if !strings.Contains(logs, want) {
			t.Errorf("the logs do not say %q:\n%s", want, logs)
		}
	}
	if strings.Contains(logs, "[Global] password") {
		t.Errorf("the logs name the password as a setting that takes a restart:\n%s", logs)
	}
	r.checkNoSecret(t, nil, openstacksim.DefaultPassword, "pw-2")
}

// TestCloudConfigRotationUnusableFile: cloud.conf is replaced by one that
// does not parse, or lacks credentials. The credentials read before stay
// in use (a token expiry heals as before); once Keystone refuses them,
// the error says why the file is not used; a good file heals the CCM.
func TestCloudConfigRotationUnusableFile(t *testing.T) {
	for name, bad := range map[string]func(sim *openstacksim.Server) string{
		"syntax":         func(*openstacksim.Server) string { return "[Global\npassword = pw-2\n" },
		"no credentials": func(sim *openstacksim.Server) string { return passwordLine.ReplaceAllString(sim.CloudConfig(), "") },
		"missing":        nil,
	} {
		t.Run(name, func(t *testing.T) {
			sim := openstacksim.NewServer(t, openstacksim.Options{})
			r := startRotation(t, sim, sim.CloudConfig())
			r.lookup(t, "at start-up")
			if bad == nil {
				if err := os.Remove(r.path); err != nil {
					t.Fatal(err)
				}
			} else {
				r.write(t, bad(sim))
			}
			issued := sim.TokensIssued()
			sim.ExpireTokens()
			r.lookup(t, "with the old credentials, once the token expired")
			if got := sim.TokensIssued() - issued; got != 1 {
				t.Errorf("an expired token cost %d token requests, want 1", got)
			}
			if !strings.Contains(r.logs(), "cannot be used") {
				t.Errorf("the logs do not say the file cannot be used:\n%s", r.logs())
			}

			sim.SetPassword(openstacksim.DefaultUsername, "pw-2")
			err := r.refused(t, "with the password changed")
			for _, want := range []string{"authentication failed", r.path + " changed but cannot be used"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("the error does not say %q: %v", want, err)
				}
			}
			r.write(t, sim.CloudConfig())
			r.lookup(t, "with the new password in cloud.conf")
			r.checkNoSecret(t, err, openstacksim.DefaultPassword, "pw-2")
		})
	}
}

// TestCloudConfigRotationOtherProject: the new cloud.conf's application
// credential belongs to another project. Its token is refused, with an
// error that says so: the CCM would look for its servers in the wrong
// project.
func TestCloudConfigRotationOtherProject(t *testing.T) {
	sim := openstacksim.NewServer(t, openstacksim.Options{
		Users: []openstacksim.User{
			{Name: openstacksim.DefaultUsername, Password: openstacksim.DefaultPassword},
			{Name: "other", Password: "other-pw", Project: "other-project"},
		},
		ApplicationCredentials: []openstacksim.ApplicationCredential{{ID: "ac-other", Secret: "ac-secret", User: "other"}},
	})
	r := startRotation(t, sim, sim.CloudConfig())
	r.lookup(t, "at start-up")
	r.write(t, "[Global]\nauth-url = "+sim.AuthURL()+"\nregion = "+sim.Region()+
		"\napplication-credential-id = ac-other\napplication-credential-secret = ac-secret\n")
	sim.ExpireTokens()
	if err := r.refused(t, "with another project's credentials"); !strings.Contains(err.Error(), "belong to another project") {
		t.Errorf("the error does not say the project differs: %v", err)
	}
	r.write(t, sim.CloudConfig())
	r.lookup(t, "with the first credentials back")
}

// TestCloudConfigUnchangedIsNotReread: a token expiry with cloud.conf as
// it was, or rewritten with the same content, costs one token and reads
// nothing new.
func TestCloudConfigUnchangedIsNotReread(t *testing.T) {
	sim := openstacksim.NewServer(t, openstacksim.Options{})
	r := startRotation(t, sim, sim.CloudConfig())
	for _, rewrite := range []bool{false, true} {
		if rewrite {
			r.write(t, sim.CloudConfig())
		}
		issued := sim.TokensIssued()
		sim.ExpireTokens()
		r.lookup(t, "after the token expired")
		if got := sim.TokensIssued() - issued; got != 1 {
			t.Errorf("an expired token cost %d token requests, want 1", got)
		}
	}
	if strings.Contains(r.logs(), "cloud config changed") {
		t.Errorf("an unchanged cloud.conf was taken for a changed one:\n%s", r.logs())
	}
}

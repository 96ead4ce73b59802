package tritonsim

import (
	"net/http"
	"slices"
	"testing"

	"github.com/joyent/triton-go/account"
	"github.com/joyent/triton-go/authentication"
	"github.com/joyent/triton-go/compute"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

func TestCloudEnvSignsWithTritonGo(t *testing.T) {
	c := StartCloud(simkit.Common{})
	t.Cleanup(c.Close)
	env := c.Env()
	if env["TRITON_URL"] != c.URL() || env["TRITON_ACCOUNT"] != DefaultAccount || env["TRITON_KEY_ID"] != c.KeyFingerprint() {
		t.Fatalf("env %v", env)
	}
	signer, err := authentication.NewPrivateKeySigner(authentication.PrivateKeySignerInput{
		KeyID: env["TRITON_KEY_ID"], PrivateKeyMaterial: []byte(env["TRITON_KEY_MATERIAL"]), AccountName: env["TRITON_ACCOUNT"],
	})
	if err != nil {
		t.Fatal(err)
	}
	cl := connectWith(t, c.Server, signer)
	id := c.AddInstance("node-1")
	got, err := cl.compute.Instances().Get(ctx(), &compute.GetInstanceInput{ID: id})
	if err != nil || got.Name != "node-1" || got.State != StateRunning || len(got.IPs) != 2 {
		t.Fatalf("instance %+v, %v", got, err)
	}
	c.ShutdownInstance(id)
	if m, _ := c.Machine(id); m.State != StateStopped {
		t.Fatalf("after ShutdownInstance: %s", m.State)
	}
	c.DeleteInstance(id)
	if m, _ := c.Machine(id); m.State != StateDeleted {
		t.Fatalf("after DeleteInstance: %s", m.State)
	}
	if c.Routes() != nil || c.CloudConfig() != "" {
		t.Fatal("Triton has no routes and no cloud config")
	}
}

// RotateSecret makes the key NewSecret mints the account key: the old
// key is refused from then on, and Env signs with the new one.
func TestCloudRotateSecret(t *testing.T) {
	c := NewServer(t, Options{}).Cloud()
	old, oldEnv := connect(t, c.Server), c.Env()
	if err := c.RotateAccountKey([]byte("not a key")); err == nil {
		t.Fatal("RotateAccountKey took a string that is no key")
	}
	key := c.NewSecret()
	if key == oldEnv["TRITON_KEY_MATERIAL"] {
		t.Fatal("NewSecret gave the account key")
	}
	c.RotateSecret(key)
	_, err := old.account.Get(ctx(), &account.GetInput{})
	wantAPIError(t, err, http.StatusUnauthorized, "InvalidCredentials")

	env := c.Env()
	if env["TRITON_KEY_MATERIAL"] != key || env["TRITON_KEY_ID"] == oldEnv["TRITON_KEY_ID"] {
		t.Fatalf("after RotateSecret, Env gives key ID %s, the new key: %v", env["TRITON_KEY_ID"], env["TRITON_KEY_MATERIAL"] == key)
	}
	signer, err := authentication.NewPrivateKeySigner(authentication.PrivateKeySignerInput{
		KeyID: env["TRITON_KEY_ID"], PrivateKeyMaterial: []byte(env["TRITON_KEY_MATERIAL"]), AccountName: env["TRITON_ACCOUNT"],
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := connectWith(t, c.Server, signer).account.Get(ctx(), &account.GetInput{}); err != nil {
		t.Fatalf("with the rotated key: %v", err)
	}
}

func TestCloudLoadBalancers(t *testing.T) {
	c := NewServer(t, Options{}).Cloud()
	nodes := cnsNodes(c.Server)
	backend := "k8s-c1-nodes.svc." + c.AccountID() + ".us-east-1.cns.joyent.com"
	lb := c.AddMachine(Machine{Name: "lb-web", Metadata: map[string]string{
		MetadataLoadBalancer: "TRUE",
		MetadataPortmap:      "tcp://80:" + backend + ":30080{check:/healthz,port:10256},https-http://443:" + backend + ":30443 http://8080:" + backend + ":30081",
	}})
	c.AddMachine(Machine{Name: "not-an-lb", Metadata: map[string]string{MetadataPortmap: "tcp://81:x:1"}})
	c.SetMetadata(nodes[1].ID, MetadataCNSStatus, "down")

	lbs := c.LoadBalancers()
	if len(lbs) != 1 || lbs[0].ID != lb.ID || lbs[0].Name != "lb-web" {
		t.Fatalf("load balancers %+v", lbs)
	}
	want := []string{"HTTP:8080->:30081", "HTTPS:443->:30443", "TCP:80->:30080"}
	if !slices.Equal(lbs[0].Listeners, want) {
		t.Fatalf("listeners %v, want %v", lbs[0].Listeners, want)
	}
	if !slices.Equal(lbs[0].Members, sorted(nodes[0].ID, nodes[2].ID)) {
		t.Fatalf("members %v", lbs[0].Members)
	}
	c.DeleteInstance(lb.ID)
	if lbs := c.LoadBalancers(); len(lbs) != 0 {
		t.Fatalf("after delete: %+v", lbs)
	}
}

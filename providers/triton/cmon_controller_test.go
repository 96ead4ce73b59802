package triton

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/joyent/triton-go/compute"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/framework/cloudapi"
	"github.com/ccmkit/ccmkit/framework/frameworktest"
	"github.com/ccmkit/ccmkit/providers/triton/internal/cloud"
	"github.com/ccmkit/ccmkit/providers/triton/tritonsim"
)

// cmonFixture is a simulated account with three machines: node-a (no
// tag), node-b (a user's CMON group) and db (no node), the provider
// started on it with a fake API server, and the Nodes of the first two.
type cmonFixture struct {
	t                *testing.T
	ctx              context.Context
	sim              *tritonsim.Server
	kube             *fake.Clientset
	provider         *Provider
	env              *framework.Env
	nodeA, nodeB, db string
}

const cmonTestCluster = "c1.example"

func newCMONFixture(t *testing.T, extra map[string]string) *cmonFixture {
	t.Helper()
	logger := ktesting.NewLogger(t, ktesting.NewConfig(ktesting.BufferLogs(true), ktesting.Verbosity(4)))
	f := &cmonFixture{t: t, ctx: klog.NewContext(t.Context(), logger), sim: tritonsim.NewServer(t, tritonsim.Options{}), kube: frameworktest.NewClientset()}
	f.nodeA = f.sim.AddMachine(tritonsim.Machine{Name: "node-a"}).ID
	f.nodeB = f.sim.AddMachine(tritonsim.Machine{Name: "node-b", Tags: map[string]any{cmonGroupsTag: "team-x,k8s"}}).ID
	f.db = f.sim.AddMachine(tritonsim.Machine{Name: "db"}).ID
	for name, id := range map[string]string{"node-a": f.nodeA, "node-b": f.nodeB} {
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.NodeSpec{ProviderID: "triton://" + id}}
		if _, err := f.kube.CoreV1().Nodes().Create(f.ctx, n, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	vars := f.sim.Env(f.sim.URL())
	vars["TRITON_CMON_URL"] = "https://cmon.us-east-1.triton.zone:9163"
	maps.Copy(vars, extra)
	f.env = &framework.Env{
		ClusterName: cmonTestCluster, Client: f.kube, Informers: informers.NewSharedInformerFactory(f.kube, 0),
		LookupEnv: func(k string) (string, bool) { v, ok := vars[k]; return v, ok },
		CloudAPI:  cloudapi.Options{MaxRetries: -1, Timeout: 5 * time.Second},
	}
	f.provider = New()
	if _, err := framework.NewCloud(f.ctx, f.provider, f.env); err != nil {
		t.Fatalf("NewCloud: %v", err)
	}
	t.Cleanup(func() { f.checkNoKey(f.logText(logger), "the logs") })
	return f
}

func (f *cmonFixture) logText(logger klog.Logger) string {
	if u, ok := logger.GetSink().(ktesting.Underlier); ok {
		return u.GetBuffer().String()
	}
	return ""
}

// controller builds the controller as Run does, without its loop.
func (f *cmonFixture) controller() *cmonController {
	f.t.Helper()
	c, err := newCMONController(f.env, f.provider)
	if err != nil {
		f.t.Fatal(err)
	}
	f.env.Informers.Start(f.ctx.Done())
	f.env.Informers.WaitForCacheSync(f.ctx.Done())
	return c
}

// run runs the controller as the framework does, until the test ends.
func (f *cmonFixture) run() {
	ctx, cancel := context.WithCancel(f.ctx)
	done := make(chan error, 1)
	f.t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			f.t.Errorf("metrics controller: %v", err)
		}
	})
	c := f.provider.cmonControllerFor()
	if c.Name != CMONControllerName {
		f.t.Fatalf("controller %q", c.Name)
	}
	go func() { done <- c.Run(ctx, f.env) }()
}

func (f *cmonFixture) tag(id string) string {
	m, _ := f.sim.Machine(id)
	v, _ := m.Tags[cmonGroupsTag].(string)
	return v
}

func (f *cmonFixture) secret() *corev1.Secret {
	s, err := f.kube.CoreV1().Secrets("kube-system").Get(f.ctx, "triton-cmon-client", metav1.GetOptions{})
	if err != nil {
		return nil
	}
	return s
}

// kubeWrites counts the create, update and patch actions on the fake API
// server.
func (f *cmonFixture) kubeWrites() int {
	n := 0
	for _, a := range f.kube.Actions() {
		switch a.GetVerb() {
		case "create", "update", "patch", "delete":
			if a.GetResource().Resource != "nodes" {
				n++
			}
		}
	}
	return n
}

// checkNoKey fails when text holds the certificate's key, or the account's.
func (f *cmonFixture) checkNoKey(text, where string) {
	f.t.Helper()
	secrets := []string{string(f.sim.AccountKeyPEM())}
	if s := f.secret(); s != nil {
		secrets = append(secrets, string(s.Data[corev1.TLSPrivateKeyKey]))
	}
	for _, s := range secrets {
		for line := range strings.Lines(s) {
			if line = strings.TrimSpace(line); len(line) > 20 && !strings.HasPrefix(line, "-----") && strings.Contains(text, line) {
				f.t.Errorf("%s hold a private key", where)
				return
			}
		}
	}
}

// TestCMONController: the controller, run as the framework runs it, adds
// the cluster's group to the node machines' tags (keeping the user's
// groups, leaving other machines alone), stores a certificate signed by
// the account key in the Secret, with which CMON's discovery lists exactly
// the cluster's nodes, and writes the Prometheus job.
func TestCMONController(t *testing.T) {
	f := newCMONFixture(t, nil)
	f.run()
	waitFor(t, "the Secret, the ConfigMap and the tags", func() bool {
		_, err := f.kube.CoreV1().ConfigMaps("kube-system").Get(f.ctx, "triton-cmon-prometheus", metav1.GetOptions{})
		return err == nil && f.secret() != nil && f.tag(f.nodeA) != ""
	})
	group := "k8s-c1-example"
	if got := f.tag(f.nodeA); got != group {
		t.Errorf("node-a's %s = %q, want %q", cmonGroupsTag, got, group)
	}
	if got := f.tag(f.nodeB); got != "team-x,k8s,"+group {
		t.Errorf("node-b's %s = %q, want the user's groups and ours", cmonGroupsTag, got)
	}
	if got := f.tag(f.db); got != "" {
		t.Errorf("db, no node, got %s = %q", cmonGroupsTag, got)
	}

	s := f.secret()
	if s.Type != corev1.SecretTypeTLS {
		t.Errorf("Secret type %s", s.Type)
	}
	checkAccountSigned(t, f, s)
	status, got := discoverAs(t, f, s, group)
	if want := []string{f.nodeA, f.nodeB}; status != http.StatusOK || !sameMachines(got, want) {
		t.Errorf("CMON answers %d, discovers %v in %s, want the nodes %v", status, got, group, want)
	}
	cm, _ := f.kube.CoreV1().ConfigMaps("kube-system").Get(f.ctx, "triton-cmon-prometheus", metav1.GetOptions{})
	if !strings.Contains(cm.Data[CMONConfigMapKey], "- "+group) || !strings.Contains(cm.Data[CMONConfigMapKey], "triton_sd_configs:") {
		t.Errorf("ConfigMap %s:\n%s", CMONConfigMapKey, cm.Data[CMONConfigMapKey])
	}
}

// checkAccountSigned checks the Secret's certificate as CMON would: the
// pair matches, subject the account, issuer the account key's sshpk MD5
// fingerprint, signed by that key, with clientAuth and joyentCmon.
func checkAccountSigned(t *testing.T, f *cmonFixture, s *corev1.Secret) {
	t.Helper()
	pair, err := tls.X509KeyPair(s.Data[corev1.TLSCertKey], s.Data[corev1.TLSPrivateKeyKey])
	if err != nil {
		t.Fatalf("the Secret's tls.crt and tls.key: %v", err)
	}
	cert, _ := x509.ParseCertificate(pair.Certificate[0])
	account := &x509.Certificate{PublicKey: f.sim.AccountKey().Public()}
	if err := account.CheckSignature(cert.SignatureAlgorithm, cert.RawTBSCertificate, cert.Signature); err != nil {
		t.Errorf("the certificate does not verify with the account key: %v", err)
	}
	k, _ := cloud.ParsePrivateKey(f.sim.AccountKeyPEM())
	if want := md5Base64(t, k.MD5); cert.Issuer.CommonName != want {
		t.Errorf("issuer CN %q, want %q", cert.Issuer.CommonName, want)
	}
	if cert.Subject.CommonName != tritonsim.DefaultAccount {
		t.Errorf("subject CN %q", cert.Subject.CommonName)
	}
	if !slices.Contains(cert.ExtKeyUsage, x509.ExtKeyUsageClientAuth) || !slices.ContainsFunc(cert.UnknownExtKeyUsage, tritonsim.OIDJoyentCMON.Equal) {
		t.Errorf("extended key usages %v %v", cert.ExtKeyUsage, cert.UnknownExtKeyUsage)
	}
}

// discoverAs asks the simulated CMON for group's machines with the
// Secret's certificate: its status, and the machines on a 200.
func discoverAs(t *testing.T, f *cmonFixture, s *corev1.Secret, group string) (int, []string) {
	t.Helper()
	pair, _ := tls.X509KeyPair(s.Data[corev1.TLSCertKey], s.Data[corev1.TLSPrivateKeyKey])
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(f.sim.CMONCAPEM())
	hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{
		Certificates: []tls.Certificate{pair}, RootCAs: roots, MinVersion: tls.VersionTLS12,
	}}}
	req, _ := http.NewRequestWithContext(f.ctx, http.MethodGet, f.sim.CMONURL()+"/v1/discover?groups="+group, http.NoBody)
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatalf("CMON discovery: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return resp.StatusCode, nil
	}
	var body struct {
		Containers []struct {
			VMUUID string `json:"vm_uuid"`
		} `json:"containers"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, c := range body.Containers {
		ids = append(ids, c.VMUUID)
	}
	return resp.StatusCode, ids
}

func sameMachines(a, b []string) bool {
	return slices.Equal(slices.Sorted(slices.Values(a)), slices.Sorted(slices.Values(b)))
}

// TestCMONIdleSync: a sync with nothing changed writes nothing, to the
// cloud or to the API server.
func TestCMONIdleSync(t *testing.T) {
	f := newCMONFixture(t, nil)
	c := f.controller()
	if _, err := c.sync(f.ctx); err != nil {
		t.Fatal(err)
	}
	cloud, kube := f.sim.Writes(), f.kubeWrites()
	if cloud != 2 || kube != 2 {
		t.Errorf("the first sync made %d cloud writes (want the 2 tags) and %d API writes (want the Secret and the ConfigMap)", cloud, kube)
	}
	next, err := c.sync(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if f.sim.Writes() != cloud || f.kubeWrites() != kube {
		t.Errorf("an idle sync made %d cloud and %d API writes", f.sim.Writes()-cloud, f.kubeWrites()-kube)
	}
	if next != c.settings.Resync {
		t.Errorf("next sync in %s, want the resync %s", next, c.settings.Resync)
	}
	// A user who drops the group gets it back; their own groups stay.
	if err := f.provider.api.Compute().Instances().AddTags(f.ctx, &compute.AddTagsInput{ID: f.nodeB, Tags: map[string]string{cmonGroupsTag: "team-y"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.sync(f.ctx); err != nil {
		t.Fatal(err)
	}
	if got := f.tag(f.nodeB); got != "team-y,k8s-c1-example" {
		t.Errorf("node-b's tag after the user replaced it: %q", got)
	}
}

// TestCMONRenewal: a certificate is replaced when less than RenewBefore of
// it remains, not before, and the controller syncs on its own for it.
func TestCMONRenewal(t *testing.T) {
	f := newCMONFixture(t, map[string]string{"TRITON_CMON_CERT_VALIDITY": "3s", "TRITON_CMON_RENEW_BEFORE": "1500ms"})
	c := f.controller()
	start := time.Now()
	clock := start
	c.now = func() time.Time { return clock }
	next, err := c.sync(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	first := f.secret()
	// X.509 times are whole seconds: the certificate expires 2 to 3s from
	// now, so it is due in 0.5 to 1.5s.
	if next < time.Second/2 || next > 3*time.Second/2 {
		t.Errorf("next sync in %s, want when the certificate is due (0.5 to 1.5s)", next)
	}
	clock = start.Add(400 * time.Millisecond)
	if _, err := c.sync(f.ctx); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(f.secret().Data[corev1.TLSCertKey], first.Data[corev1.TLSCertKey]) {
		t.Fatal("renewed with more than RenewBefore left")
	}
	clock = start.Add(2 * time.Second)
	if _, err := c.sync(f.ctx); err != nil {
		t.Fatal(err)
	}
	renewed := f.secret()
	if bytes.Equal(renewed.Data[corev1.TLSCertKey], first.Data[corev1.TLSCertKey]) || bytes.Equal(renewed.Data[corev1.TLSPrivateKeyKey], first.Data[corev1.TLSPrivateKeyKey]) {
		t.Fatal("not renewed with less than RenewBefore left (a new certificate and a new key)")
	}
	checkAccountSigned(t, f, renewed)

	// Run as the framework does, the controller renews on its own.
	f.run()
	before := f.secret().Data[corev1.TLSCertKey]
	block, _ := pem.Decode(before)
	old, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "a renewal", func() bool { return !bytes.Equal(f.secret().Data[corev1.TLSCertKey], before) })
	if !time.Now().Before(old.NotAfter) {
		t.Errorf("renewed after the certificate expired at %s", old.NotAfter)
	}
}

// TestCMONSecretErrors: a Secret of the name that is not a TLS one is left
// alone with a clear error; a failed write says what failed, and neither
// the error nor the logs hold a key.
func TestCMONSecretErrors(t *testing.T) {
	f := newCMONFixture(t, nil)
	c := f.controller()
	other := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "triton-cmon-client", Namespace: "kube-system"}, Data: map[string][]byte{"password": []byte("hunter2")}}
	if _, err := f.kube.CoreV1().Secrets("kube-system").Create(f.ctx, other, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err := c.sync(f.ctx)
	if !errors.Is(err, errCMONSecretType) {
		t.Errorf("sync with someone else's Secret: %v", err)
	}
	if s := f.secret(); string(s.Data["password"]) != "hunter2" || len(s.Data) != 1 {
		t.Errorf("someone else's Secret changed: %v", s.Data)
	}
	if err := f.kube.CoreV1().Secrets("kube-system").Delete(f.ctx, "triton-cmon-client", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	f.kube.PrependReactor("create", "secrets", func(a k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("etcd is on fire")
	})
	_, err = c.sync(f.ctx)
	if err == nil || !strings.Contains(err.Error(), "creating Secret kube-system/triton-cmon-client") {
		t.Errorf("sync with the Secret's create failing: %v", err)
	}
	f.checkNoKey(err.Error(), "the error")
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(t.Context(), 10*time.Millisecond, 15*time.Second, true, func(context.Context) (bool, error) {
		return cond(), nil
	})
	if err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

// TestCMONManyNodes: with many nodes a sync reads their machines from one
// list of the account's (a count and a page), not a GET each, and an idle
// sync costs those two reads and no write.
func TestCMONManyNodes(t *testing.T) {
	f := newCMONFixture(t, nil)
	const n = 40
	for i := range n {
		name := fmt.Sprintf("node-%02d", i)
		id := f.sim.AddMachine(tritonsim.Machine{Name: name}).ID
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.NodeSpec{ProviderID: "triton://" + id}}
		if _, err := f.kube.CoreV1().Nodes().Create(f.ctx, node, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	c := f.controller()
	before := f.sim.Stats()
	if _, err := c.sync(f.ctx); err != nil {
		t.Fatal(err)
	}
	first := f.sim.Stats()
	if gets := first["GET /{account}/machines/{id}"] - before["GET /{account}/machines/{id}"]; gets != 0 {
		t.Errorf("the first sync read %d machines one by one", gets)
	}
	if tags := first["POST /{account}/machines/{id}/tags"] - before["POST /{account}/machines/{id}/tags"]; tags != n+2 {
		t.Errorf("the first sync tagged %d machines, want %d", tags, n+2)
	}
	if _, err := c.sync(f.ctx); err != nil {
		t.Fatal(err)
	}
	calls, writes := 0, f.sim.Writes()
	for op, k := range f.sim.Stats() {
		calls += k - first[op]
	}
	if calls != 2 || writes != n+2 {
		t.Errorf("an idle sync of %d nodes made %d calls (want a count and a page) and %d writes", n+2, calls, writes-(n+2))
	}
}

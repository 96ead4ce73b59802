package kubetest_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/ccmkit/ccmkit/framework/frameworktest/kubetest"
)

// requireControlPlane skips t when kube-apiserver and etcd are not built.
func requireControlPlane(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts kube-apiserver and etcd")
	}
	if _, err := kubetest.ControlPlaneBinDir(""); err != nil {
		t.Skipf("skipping: %v", err)
	}
}

const testRBAC = `# a comment-only document is skipped
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: cloud-controller-manager, namespace: kube-system}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: test:node-reader}
rules:
- {apiGroups: [""], resources: [nodes], verbs: [get, list]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: test:node-reader}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: test:node-reader}
subjects:
- {kind: ServiceAccount, name: cloud-controller-manager, namespace: kube-system}
`

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestApplyManifestsCreatesThenUpdates(t *testing.T) {
	ctx := t.Context()
	c := fake.NewClientset()
	path := writeFile(t, "rbac.yaml", testRBAC)
	if err := kubetest.ApplyManifests(ctx, c, path); err != nil {
		t.Fatal(err)
	}
	updated := writeFile(t, "rbac2.yaml", strings.Replace(testRBAC, "verbs: [get, list]", "verbs: [get, list, watch]", 1))
	if err := kubetest.ApplyManifests(ctx, c, updated); err != nil {
		t.Fatalf("second apply: %v", err)
	}
	role, err := c.RbacV1().ClusterRoles().Get(ctx, "test:node-reader", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := role.Rules[0].Verbs; !slices.Equal(got, []string{"get", "list", "watch"}) {
		t.Errorf("verbs after update = %v", got)
	}
	if _, err := c.CoreV1().ServiceAccounts("kube-system").Get(ctx, "cloud-controller-manager", metav1.GetOptions{}); err != nil {
		t.Error(err)
	}
}

func TestApplyManifestsRejectsUnknownKinds(t *testing.T) {
	path := writeFile(t, "deploy.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x, namespace: default}\n")
	err := kubetest.ApplyManifests(t.Context(), fake.NewClientset(), path)
	if err == nil || !strings.Contains(err.Error(), "unsupported kind ConfigMap") {
		t.Fatalf("err = %v, want unsupported kind ConfigMap", err)
	}
}

func TestControlPlaneBinDirMissing(t *testing.T) {
	_, err := kubetest.ControlPlaneBinDir(t.TempDir())
	if err == nil || !strings.Contains(err.Error(), kubetest.ErrNoControlPlaneBinaries.Error()) {
		t.Fatalf("err = %v, want ErrNoControlPlaneBinaries", err)
	}
}

func TestControlPlaneCCMIdentityAndRBAC(t *testing.T) {
	requireControlPlane(t)
	ctx := t.Context()
	cp := kubetest.StartControlPlane(t, kubetest.ControlPlaneOptions{
		RBACManifests: []string{writeFile(t, "rbac.yaml", testRBAC)},
	})

	for _, ns := range []string{"kube-system", "kube-node-lease", "default"} {
		if _, err := cp.AdminClient().CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); err != nil {
			t.Errorf("namespace %s: %v", ns, err)
		}
	}

	ccm := clientFromKubeconfig(t, cp.CCMKubeconfig())
	review, err := ccm.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := review.Status.UserInfo.Username; got != kubetest.DefaultCCMUser {
		t.Errorf("CCM user = %q, want %q", got, kubetest.DefaultCCMUser)
	}
	wantGroups := []string{"system:serviceaccounts", "system:serviceaccounts:kube-system", "system:authenticated"}
	if got := review.Status.UserInfo.Groups; !slices.Equal(got, wantGroups) {
		t.Errorf("CCM groups = %v, want %v", got, wantGroups)
	}

	// The manifest's binding to the ServiceAccount applies, and nothing else.
	if _, err := ccm.CoreV1().Nodes().List(ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("listing nodes as the CCM: %v", err)
	}
	for _, attr := range []authorizationv1.ResourceAttributes{
		{Verb: "list", Resource: "nodes"},
		{Verb: "update", Resource: "nodes"},
		{Verb: "list", Resource: "secrets"},
	} {
		allowed := canI(t, ccm, attr)
		if want := attr.Verb == "list" && attr.Resource == "nodes"; allowed != want {
			t.Errorf("CCM can %s %s = %v, want %v", attr.Verb, attr.Resource, allowed, want)
		}
	}

	// The admin kubeconfig is system:masters, and a copy works as well.
	copied := filepath.Join(t.TempDir(), "kubeconfig")
	if err := cp.WriteKubeconfig(copied); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{cp.AdminKubeconfig(), copied} {
		if !canI(t, clientFromKubeconfig(t, path), authorizationv1.ResourceAttributes{Verb: "delete", Resource: "secrets"}) {
			t.Errorf("%s is not an admin", path)
		}
	}
}

func canI(t *testing.T, c kubernetes.Interface, attr authorizationv1.ResourceAttributes) bool {
	t.Helper()
	r, err := c.AuthorizationV1().SelfSubjectAccessReviews().Create(t.Context(),
		&authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &attr}},
		metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return r.Status.Allowed
}

func clientFromKubeconfig(t *testing.T, path string) kubernetes.Interface {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatal(err)
	}
	return kubernetes.NewForConfigOrDie(cfg)
}

// TestControlPlaneStopLeavesNoProcess uses the non-testing API, as a demo
// program would, and checks that Stop ends etcd and kube-apiserver.
func TestControlPlaneStopLeavesNoProcess(t *testing.T) {
	requireControlPlane(t)
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	cp, err := kubetest.NewControlPlane(kubetest.ControlPlaneOptions{LogDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	if err := cp.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("started in %s", cp.StartupTime())
	logs := []string{filepath.Join(cp.LogDir(), "etcd.log"), filepath.Join(cp.LogDir(), "kube-apiserver.log")}
	running := holders(t, logs)
	if len(running) != 2 {
		t.Errorf("processes writing the logs: %v, want etcd and kube-apiserver", running)
	}
	if err := cp.Stop(); err != nil {
		t.Fatal(err)
	}
	if left := holders(t, logs); len(left) > 0 {
		t.Errorf("still running after Stop: %v", left)
	}
	if _, err := os.Stat(cp.WorkDir()); !os.IsNotExist(err) {
		t.Errorf("work directory %s not removed: %v", cp.WorkDir(), err)
	}
	if err := cp.Stop(); err != nil {
		t.Errorf("second Stop: %v", err)
	}
}

// holders lists the processes (pid: command) that have one of files open.
func holders(t *testing.T, files []string) []string {
	t.Helper()
	fds, _ := filepath.Glob("/proc/[0-9]*/fd/*")
	seen := map[string]bool{}
	var out []string
	for _, fd := range fds {
		target, err := os.Readlink(fd)
		if err != nil || !slices.Contains(files, target) {
			continue
		}
		pid := strings.Split(fd, "/")[2]
		if pid == "self" || seen[pid] || pid == strconv.Itoa(os.Getpid()) {
			continue
		}
		seen[pid] = true
		comm, _ := os.ReadFile("/proc/" + pid + "/comm")
		out = append(out, pid+": "+strings.TrimSpace(string(comm)))
	}
	return out
}

package kubetest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/klog/v2/ktesting"
)

// logTailBytes is how much of each component log a failed test prints.
const logTailBytes = 16 << 10

// StartControlPlane starts a control plane for t and stops it with
// t.Cleanup. When t fails, the end of the etcd and kube-apiserver logs is
// printed and the work directory (logs, kubeconfigs) is kept. A missing
// binary fails t; tests that should skip instead check ControlPlaneBinDir
// first.
func StartControlPlane(t testing.TB, o ControlPlaneOptions) *ControlPlane {
	t.Helper()
	cp, err := NewControlPlane(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			cp.KeepWorkDir()
			cp.dumpLogs(t)
		}
		if err := cp.Stop(); err != nil {
			t.Errorf("stopping the control plane: %v", err)
		}
	})
	stopBeforeDeadline(t, cp)

	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithTimeout(ctx, 2*o.startTimeout()+30*time.Second)
	defer cancel()
	if err := cp.Start(ctx); err != nil {
		t.Fatalf("starting the control plane: %v", err)
	}
	t.Logf("control plane at %s started in %s", cp.admin.Host, cp.StartupTime().Round(time.Millisecond))
	return cp
}

// stopBeforeDeadline stops the control plane shortly before the test
// binary's -timeout panics, since a panic skips t.Cleanup and would leave
// etcd and kube-apiserver running in their own process groups.
func stopBeforeDeadline(t testing.TB, cp *ControlPlane) {
	d, ok := t.(interface{ Deadline() (time.Time, bool) })
	if !ok {
		return
	}
	deadline, ok := d.Deadline()
	if !ok {
		return
	}
	timer := time.AfterFunc(time.Until(deadline)-5*time.Second, func() { _ = cp.Stop() })
	t.Cleanup(func() { timer.Stop() })
}

// dumpLogs prints the end of each component log.
func (c *ControlPlane) dumpLogs(t testing.TB) {
	t.Helper()
	if c.logDir == "" {
		return
	}
	for _, name := range []string{EtcdBinary, KubeAPIServerBinary} {
		path := filepath.Join(c.logDir, name+".log")
		tail, err := readTail(path, logTailBytes)
		if err != nil {
			t.Logf("%s log: %v", name, err)
			continue
		}
		t.Logf("---- end of %s (%s) ----\n%s", name, path, tail)
	}
	t.Logf("control plane work directory kept: %s", c.workDir)
}

// readTail returns up to n bytes from the end of a file, starting at a line.
func readTail(path string, n int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	off := max(fi.Size()-n, 0)
	buf := make([]byte, fi.Size()-off)
	if _, err := f.ReadAt(buf, off); err != nil {
		return nil, err
	}
	if off > 0 {
		if i := bytes.IndexByte(buf, '\n'); i >= 0 {
			buf = buf[i+1:]
		}
	}
	return buf, nil
}

// writeKubeconfig writes a kubeconfig with cfg's server, CA and client
// certificate, readable by the owner only.
func writeKubeconfig(path string, cfg *rest.Config, user string) error {
	const name = "ccmkit"
	kc := clientcmdapi.NewConfig()
	kc.Clusters[name] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos[user] = &clientcmdapi.AuthInfo{ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData}
	kc.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: user}
	kc.CurrentContext = name
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		return fmt.Errorf("writing kubeconfig %s: %w", path, err)
	}
	return nil
}

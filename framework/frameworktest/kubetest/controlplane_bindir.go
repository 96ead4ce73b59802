package kubetest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// BinDirEnv names the environment variable that points at the directory
// holding kube-apiserver and etcd.
const BinDirEnv = "CCMKIT_BIN_DIR"

// Control plane binary names, looked up in the bin directory.
const (
	KubeAPIServerBinary = "kube-apiserver"
	EtcdBinary          = "etcd"
)

// ErrNoControlPlaneBinaries is wrapped by the error ControlPlaneBinDir
// returns when kube-apiserver or etcd is missing. Tests that need a control
// plane skip on it:
//
//	if _, err := kubetest.ControlPlaneBinDir(""); err != nil {
//		t.Skip(err)
//	}
var ErrNoControlPlaneBinaries = errors.New("control plane binaries not found")

// ControlPlaneBinDir resolves the directory that holds kube-apiserver and
// etcd and checks both are there and executable. dir wins when set; then
// $CCMKIT_BIN_DIR; then the bin/ directory next to the go.mod found by
// walking up from the working directory (the module root, where ccmkit's
// `make controlplane` builds them).
func ControlPlaneBinDir(dir string) (string, error) {
	if dir == "" {
		dir = os.Getenv(BinDirEnv) //nolint:forbidigo // the test kit's own setting, not provider configuration
	}
	if dir == "" {
		root, err := moduleRoot()
		if err != nil {
			return "", fmt.Errorf("%w: %w (set %s)", ErrNoControlPlaneBinaries, err, BinDirEnv)
		}
		dir = filepath.Join(root, "bin")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("resolving %s: %w", dir, err)
	}
	for _, name := range []string{KubeAPIServerBinary, EtcdBinary} {
		if err := checkExecutable(filepath.Join(abs, name)); err != nil {
			return "", fmt.Errorf("%w in %s: %w (build them with `make controlplane`, or set %s)",
				ErrNoControlPlaneBinaries, abs, err, BinDirEnv)
		}
	}
	return abs, nil
}

func checkExecutable(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if fi.IsDir() || fi.Mode().Perm()&0o111 == 0 {
		return fmt.Errorf("%s is not an executable file", path)
	}
	return nil
}

// moduleRoot walks up from the working directory to the first directory
// with a go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

package tritonsim

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

// nfsExports stands in for the storage VMs' NFS servers: each volume's
// export is a directory, named by the volume's ID, under one directory
// (Options.NFSExportDir, or one made on first use and removed by Close).
// The two accounts of a Server (OtherAccountServer) share it; volume IDs
// are unique across them.
type nfsExports struct {
	mu   sync.Mutex
	dir  string
	made bool // dir was made here: Close removes it
}

// root is the directory the exports are under, made if need be.
func (e *nfsExports) root() (string, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.dir != "" {
		return e.dir, nil
	}
	dir, err := os.MkdirTemp("", "tritonsim-nfs-")
	if err != nil {
		return "", fmt.Errorf("making the NFS exports' directory: %w", err)
	}
	e.dir, e.made = dir, true
	return dir, nil
}

// path is the directory of volume id's export, "" before any export is
// made (the root is made on first use).
func (e *nfsExports) path(id string) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.dir == "" {
		return ""
	}
	return filepath.Join(e.dir, id)
}

// make makes volume id's export directory (empty, as a new storage VM's
// delegated dataset is), if it is not there already.
func (e *nfsExports) make(id string) error {
	root, err := e.root()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(root, id), 0o755); err != nil {
		return fmt.Errorf("making the NFS export of volume %s: %w", id, err)
	}
	return nil
}

// remove removes volume id's export and everything written to it.
func (e *nfsExports) remove(id string) error {
	if dir := e.path(id); dir != "" {
		return os.RemoveAll(dir)
	}
	return nil
}

// close removes the exports' directory if it was made here.
func (e *nfsExports) close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.made {
		return nil
	}
	err := os.RemoveAll(e.dir)
	e.dir, e.made = "", false
	return err
}

// NFSExportDir is the directory the volumes' NFS exports are under, one
// directory per volume named by its ID: Options.NFSExportDir, or, when
// that is "", a temporary directory made when the first export is (""
// until then) and removed by Close.
func (s *Server) NFSExportDir() string {
	e := s.exports()
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.dir
}

// VolumeExportDir is the local directory that holds volume id's data, the
// stand-in for what its storage VM's NFS server exports: what a test
// bind-mounts where the node would mount the volume's filesystem_path
// over NFS. It is there while the volume is ready (or deleting, until it
// goes): false for a volume creating, failed or gone, whose NFS server
// would not answer.
func (s *Server) VolumeExportDir(id string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, found := s.st.vols.volumes.Get(id)
	if !found || v.FilesystemPath == "" || v.State == VolumeFailed {
		return "", false
	}
	return s.st.vols.exports.path(id), true
}

// ErrNoNFSExport is NFSExport's error for a filesystem_path no volume of
// the account exports now: the NFS server is gone or not up yet (mount's
// "No such file or directory" or a timeout on Triton).
var ErrNoNFSExport = errors.New("tritonsim: no NFS export at that path")

// NFSExport resolves a volume's filesystem_path ("<ip>:/zones/<uuid>/data",
// as GetVolume gives it) to the local directory VolumeExportDir gives for
// it: what a test standing in for `mount -t nfs <filesystem_path>
// <target>` bind-mounts on target. The other account's volumes
// (OtherAccountServer) are found too, as an NFS server answers whoever
// reaches it. It returns ErrNoNFSExport for a path no volume exports.
func (s *Server) NFSExport(filesystemPath string) (string, error) {
	for _, acct := range []*Server{s, s.otherIfMade()} {
		if acct == nil {
			continue
		}
		if dir, ok := acct.exportOf(filesystemPath); ok {
			return dir, nil
		}
	}
	return "", fmt.Errorf("%w: %q", ErrNoNFSExport, filesystemPath)
}

// exportOf is the export directory of the account's volume whose
// filesystem_path is path.
func (s *Server) exportOf(path string) (string, bool) {
	s.mu.Lock()
	v, found := s.st.vols.volumes.Find(func(v *Volume) bool { return v.FilesystemPath == path })
	id := ""
	if found {
		id = v.ID
	}
	s.mu.Unlock()
	if !found {
		return "", false
	}
	return s.VolumeExportDir(id)
}

// exports is the Server's NFS exports (shared with the other account).
func (s *Server) exports() *nfsExports {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st.vols.exports
}

package main

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/x509"
	"debug/elf"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// checkLayout checks the OCI layout <out>/<name>: its index (tagged
// o.Version, one image per platform of want), each image (checkImage) and
// the SBOM attached to the index. It returns every problem found.
func checkLayout(o Options, name string, want []v1.Platform) []error {
	dir := filepath.Join(o.Out, name)
	desc, err := imageIndexDescriptor(dir)
	if err != nil {
		return []error{err}
	}
	var errs []error
	if got := desc.Annotations[refName]; got != o.Version {
		errs = append(errs, fmt.Errorf("index tagged %q in the layout, want %q", got, o.Version))
	}
	lp, err := layout.FromPath(dir)
	if err != nil {
		return append(errs, err)
	}
	idx, err := lp.ImageIndex()
	if err != nil {
		return append(errs, err)
	}
	ii, err := idx.ImageIndex(desc.Digest)
	if err != nil {
		return append(errs, err)
	}
	m, err := ii.IndexManifest()
	if err != nil {
		return append(errs, err)
	}
	if len(m.Manifests) != len(want) {
		errs = append(errs, fmt.Errorf("index has %d images, want %d (%v)", len(m.Manifests), len(want), want))
	}
	for _, p := range want {
		i := slices.IndexFunc(m.Manifests, func(d v1.Descriptor) bool { return d.Platform != nil && d.Platform.Equals(p) })
		if i < 0 {
			errs = append(errs, fmt.Errorf("index has no image for %s", p))
			continue
		}
		img, err := ii.Image(m.Manifests[i].Digest)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, e := range checkImage(o, name, p, img) {
			errs = append(errs, fmt.Errorf("%s: %w", p, e))
		}
	}
	return append(errs, checkSBOM(dir, idx, desc.Digest)...)
}

// checkImage checks one platform's image: config, files, and the binary
// (static ELF for p; run with --version when p is the host's).
func checkImage(o Options, name string, p v1.Platform, img v1.Image) []error {
	var errs []error
	fail := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	cfg, err := img.ConfigFile()
	if err != nil {
		return []error{err}
	}
	if cfg.OS != p.OS || cfg.Architecture != p.Architecture {
		fail("config is for %s/%s", cfg.OS, cfg.Architecture)
	}
	c := cfg.Config
	if !slices.Equal(c.Entrypoint, []string{"/" + name}) || len(c.Cmd) != 0 {
		fail("entrypoint %q cmd %q, want [/%s] and no cmd", c.Entrypoint, c.Cmd, name)
	}
	wantUser, wantEnv := user, []string(nil)
	if isCSI(name) {
		wantUser, wantEnv = csiUser, []string{toolsPath}
	}
	if c.User != wantUser || c.WorkingDir != "/" {
		fail("user %q workdir %q, want %q and /", c.User, c.WorkingDir, wantUser)
	}
	if !slices.Equal(c.Env, wantEnv) {
		fail("env %q, want %q", c.Env, wantEnv)
	}
	for k, v := range labels(o, name) {
		if c.Labels[k] != v {
			fail("label %s = %q, want %q", k, c.Labels[k], v)
		}
	}
	if !cfg.Created.Equal(o.Epoch) {
		fail("created %s, want %s", cfg.Created.Time, o.Epoch)
	}
	files, err := readFiles(img, o.Epoch)
	if err != nil {
		return append(errs, err)
	}
	errs = append(errs, checkFiles(files, name)...)
	if isCSI(name) {
		errs = append(errs, checkTools(files, name, p)...)
	}
	if bin, ok := files[name]; ok {
		errs = append(errs, checkBinary(bin.data, name, o.Version, p)...)
	}
	return errs
}

// file is one regular file or directory of an image's filesystem.
type file struct {
	hdr  *tar.Header
	data []byte
}

// readFiles flattens img's layers; an entry whose mtime is not epoch is an error.
func readFiles(img v1.Image, epoch time.Time) (map[string]file, error) {
	rc := mutate.Extract(img)
	defer rc.Close()
	tr := tar.NewReader(rc)
	files := map[string]file{}
	var errs []error
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			return nil, err
		}
		n := strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(h.Name, "./"), "/"), "/")
		if !h.ModTime.Equal(epoch) {
			errs = append(errs, fmt.Errorf("/%s has mtime %s, want %s", n, h.ModTime, epoch))
		}
		files[n] = file{hdr: h, data: data}
	}
	return files, errors.Join(errs...)
}

func checkFiles(files map[string]file, name string) []error {
	var errs []error
	fail := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	want := map[string]os.FileMode{caFile: 0o644, "etc/passwd": 0o644, "etc/group": 0o644, "tmp": os.ModeDir | os.ModeSticky | 0o777, name: 0o755}
	for n, mode := range want {
		f, ok := files[n]
		if !ok {
			fail("no /%s", n)
			continue
		}
		got := f.hdr.FileInfo().Mode() & (os.ModePerm | os.ModeDir | os.ModeSticky | os.ModeSetuid | os.ModeSetgid)
		if got != mode {
			fail("/%s has mode %s, want %s", n, got, mode)
		}
		if f.hdr.Uid != 0 || f.hdr.Gid != 0 {
			fail("/%s is owned by %d:%d, want 0:0", n, f.hdr.Uid, f.hdr.Gid)
		}
	}
	if !strings.Contains(string(files["etc/passwd"].data), "\nnonroot:x:65532:65532:") {
		fail("/etc/passwd has no nonroot user 65532")
	}
	if !strings.Contains(string(files["etc/group"].data), "\nnonroot:x:65532:") {
		fail("/etc/group has no nonroot group 65532")
	}
	n, err := countCerts(files[caFile].data)
	if err != nil || n <= 100 {
		fail("/%s: %d certificates (%v), want more than 100", caFile, n, err)
	}
	return errs
}

func countCerts(b []byte) (int, error) {
	n := 0
	for {
		var blk *pem.Block
		blk, b = pem.Decode(b)
		if blk == nil {
			return n, nil
		}
		if _, err := x509.ParseCertificate(blk.Bytes); err != nil {
			return n, err
		}
		n++
	}
}

// elfMachine is the ELF machine of each architecture the images are built for.
var elfMachine = map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64, "arm": elf.EM_ARM,
	"ppc64le": elf.EM_PPC64, "s390x": elf.EM_S390, "riscv64": elf.EM_RISCV, "386": elf.EM_386}

// checkBinary checks bin is a static ELF executable for p and, on p's
// host, that `bin --version` prints "<name> <version>".
func checkBinary(bin []byte, name, version string, p v1.Platform) []error {
	f, err := elf.NewFile(bytes.NewReader(bin))
	if err != nil {
		return []error{fmt.Errorf("/%s is no ELF file: %w", name, err)}
	}
	defer f.Close()
	var errs []error
	if m, ok := elfMachine[p.Architecture]; !ok || f.Machine != m {
		errs = append(errs, fmt.Errorf("/%s is for %s, want %s", name, f.Machine, p.Architecture))
	}
	for _, pr := range f.Progs {
		if pr.Type == elf.PT_INTERP || pr.Type == elf.PT_DYNAMIC {
			errs = append(errs, fmt.Errorf("/%s is dynamically linked (%s)", name, pr.Type))
		}
	}
	if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
		errs = append(errs, fmt.Errorf("/%s needs %v", name, libs))
	}
	if p.OS != runtime.GOOS || p.Architecture != runtime.GOARCH || len(errs) > 0 {
		return errs
	}
	// Named as in the image: a CSI driver prints its argv[0].
	dir, err := os.MkdirTemp("", "imagetest-")
	if err != nil {
		return append(errs, err)
	}
	defer os.RemoveAll(dir)
	exe := filepath.Join(dir, name)
	if err := os.WriteFile(exe, bin, 0o755); err != nil {
		return append(errs, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, exe, "--version").CombinedOutput()
	if err != nil {
		errs = append(errs, fmt.Errorf("/%s --version: %w: %s", name, err, out))
	} else if got, want := strings.TrimSpace(string(out)), name+" "+version; got != want {
		errs = append(errs, fmt.Errorf("/%s --version printed %q, want %q", name, got, want))
	}
	return errs
}

// checkSBOM checks the layout's SPDX artifact: its subject is the index
// idx, it is the same document as <dir>.spdx.json, and it lists the main
// module and client-go with purls and checksums.
func checkSBOM(dir string, lidx v1.ImageIndex, idx v1.Hash) []error {
	m, err := lidx.IndexManifest()
	if err != nil {
		return []error{err}
	}
	i := slices.IndexFunc(m.Manifests, func(d v1.Descriptor) bool { return d.ArtifactType == sbomType })
	if i < 0 {
		return []error{errors.New("layout has no SBOM artifact")}
	}
	art, err := lidx.Image(m.Manifests[i].Digest)
	if err != nil {
		return []error{err}
	}
	am, err := art.Manifest()
	if err != nil {
		return []error{err}
	}
	if am.Subject == nil || am.Subject.Digest != idx || am.Subject.MediaType != types.OCIImageIndex ||
		am.Config.MediaType != types.OCIEmptyJSON || len(am.Layers) != 1 {
		return []error{fmt.Errorf("SBOM artifact manifest %+v: want subject %s, an empty config, one blob", am, idx)}
	}
	l, err := art.LayerByDigest(am.Layers[0].Digest)
	if err != nil {
		return []error{err}
	}
	rc, err := l.Compressed()
	if err != nil {
		return []error{err}
	}
	defer rc.Close()
	blob, err := io.ReadAll(rc)
	if err != nil {
		return []error{err}
	}
	var errs []error
	if file, err := os.ReadFile(dir + ".spdx.json"); err != nil {
		errs = append(errs, err)
	} else if !bytes.Equal(file, blob) {
		errs = append(errs, fmt.Errorf("%s.spdx.json is not the attached SBOM", dir))
	}
	var doc spdxDoc
	if err := json.Unmarshal(blob, &doc); err != nil {
		return append(errs, fmt.Errorf("SBOM: %w", err))
	}
	if doc.SPDXVersion != "SPDX-2.3" {
		errs = append(errs, fmt.Errorf("SBOM is %q, want SPDX-2.3", doc.SPDXVersion))
	}
	if strings.HasSuffix(dir, csiSuffix) {
		errs = append(errs, checkDebianSBOM(doc, filepath.Base(dir))...)
	}
	for _, mod := range []string{module, "k8s.io/client-go", "stdlib"} {
		i := slices.IndexFunc(doc.Packages, func(p spdxPackage) bool { return p.Name == mod })
		if i < 0 {
			errs = append(errs, fmt.Errorf("SBOM does not list %s", mod))
			continue
		}
		p := doc.Packages[i]
		if len(p.ExternalRefs) != 1 || p.ExternalRefs[0].Locator != "pkg:golang/"+mod+"@"+p.VersionInfo || p.VersionInfo == "" {
			errs = append(errs, fmt.Errorf("SBOM package %s: version %q refs %+v", mod, p.VersionInfo, p.ExternalRefs))
		}
		if mod == "k8s.io/client-go" && len(p.Checksums) != 1 {
			errs = append(errs, fmt.Errorf("SBOM package %s has no go.sum checksum", mod))
		}
	}
	return errs
}

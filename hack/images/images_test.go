package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
)

// The images under test: built by TestMain into a temporary directory for
// the host platform only (keeping `make test` lean), or, when
// CCMKIT_IMAGES=<dir> is set, the layouts `make images` wrote there, for
// every platform their index has.
var (
	testOpts   Options
	testNames  []string
	testBuilt  = true // false when CCMKIT_IMAGES names the layouts
	hostPlatfm = v1.Platform{OS: "linux", Architecture: runtime.GOARCH}
)

func TestMain(m *testing.M) {
	code, err := setup(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, "images test:", err)
		code = 1
	}
	os.Exit(code)
}

func setup(m *testing.M) (int, error) {
	ctx := context.Background()
	o, err := defaultOptions(ctx, "../..", os.Getenv("SOURCE_DATE_EPOCH"))
	if err != nil {
		return 0, err
	}
	if dir := os.Getenv("CCMKIT_IMAGES"); dir != "" {
		testBuilt = false
		o.Out = dir
		if testNames, err = layoutNames(dir); err != nil {
			return 0, err
		}
		testOpts = o
		return m.Run(), nil
	}
	tmp, err := os.MkdirTemp("", "ccmkit-images-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(tmp)
	o.Out, o.Platforms = filepath.Join(tmp, "a"), []v1.Platform{hostPlatfm}
	built, err := Build(ctx, o)
	if err != nil {
		return 0, err
	}
	for _, b := range built {
		testNames = append(testNames, b.Name)
	}
	testOpts = o
	return m.Run(), nil
}

// layoutNames lists the images of digests.txt in dir.
func layoutNames(dir string) ([]string, error) {
	b, err := os.ReadFile(filepath.Join(dir, "digests.txt"))
	if err != nil {
		return nil, err
	}
	var names []string
	for l := range strings.Lines(string(b)) {
		if f := strings.Fields(l); len(f) == 2 {
			names = append(names, f[0])
		}
	}
	return names, nil
}

// imageOptions are the options name was built with: in CCMKIT_IMAGES mode
// the version is the tag the layout gives the index (VERSION=... make
// images may have set it), the rest is this checkout's.
func imageOptions(t *testing.T, name string) (Options, []v1.Platform) {
	t.Helper()
	o := testOpts
	if testBuilt {
		return o, o.Platforms
	}
	desc, err := imageIndexDescriptor(filepath.Join(o.Out, name))
	if err != nil {
		t.Fatal(err)
	}
	o.Version = desc.Annotations[refName]
	lp, err := layout.FromPath(filepath.Join(o.Out, name))
	if err != nil {
		t.Fatal(err)
	}
	ii, err := lp.ImageIndex()
	if err != nil {
		t.Fatal(err)
	}
	idx, err := ii.ImageIndex(desc.Digest)
	if err != nil {
		t.Fatal(err)
	}
	m, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	var ps []v1.Platform
	for _, d := range m.Manifests {
		if d.Platform != nil {
			ps = append(ps, *d.Platform)
		}
	}
	return o, ps
}

func TestImages(t *testing.T) {
	var want []string
	for _, c := range []string{"brightbox", "digitalocean", "openstack", "rancher", "skeleton", "triton"} {
		want = append(want, c+"-cloud-controller-manager")
	}
	// The CSI drivers' images: checkImage checks their tools too.
	want = append(want, "brightbox-csi-driver", "digitalocean-csi-driver", "openstack-csi-driver", "rancher-csi-driver", "triton-csi-driver")
	for _, name := range want {
		t.Run(name, func(t *testing.T) {
			if !strings.Contains(" "+strings.Join(testNames, " ")+" ", " "+name+" ") {
				t.Fatalf("no image %s among %v", name, testNames)
			}
			o, platforms := imageOptions(t, name)
			if !testBuilt && len(platforms) < 2 {
				t.Errorf("index has platforms %v, want linux/amd64 and linux/arm64 at least", platforms)
			}
			for _, err := range checkLayout(o, name, platforms) {
				t.Error(err)
			}
		})
	}
}

// TestReproducible builds a CCM and a CSI image a second time, into
// another directory, and expects the digests digests.txt has for them.
// (The second build comes from the build cache but for the link, and the
// Debian packages from bin/debian-cache; two clean clones are compared by
// hand, see docs/install.md.)
func TestReproducible(t *testing.T) {
	if !testBuilt {
		t.Skip("CCMKIT_IMAGES: the layouts were built elsewhere")
	}
	o := testOpts
	o.Out, o.Names = t.TempDir(), []string{"skeleton-cloud-controller-manager", "digitalocean-csi-driver"}
	built, err := Build(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	first, err := os.ReadFile(filepath.Join(testOpts.Out, "digests.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range built {
		line := fmt.Sprintf("%s %s\n", b.Name, b.Digest)
		if !strings.Contains(string(first), line) {
			t.Errorf("second build gave %q; the first:\n%s", line, first)
		}
	}
}

package main

import (
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
)

// TestChecksCatchBrokenImages breaks one property of a good image at a time
// and expects checkImage to say so: the image test cannot pass an image
// that runs as root, has no CA certificates or a dynamic binary.
func TestChecksCatchBrokenImages(t *testing.T) {
	const img = "skeleton-cloud-controller-manager"
	o, _ := imageOptions(t, img)
	good := hostImage(t, o, img)
	if errs := checkImage(o, img, hostPlatfm, good); len(errs) > 0 {
		t.Fatalf("the good image fails: %v", errs)
	}
	withConfig := func(f func(*v1.Config)) v1.Image { return configured(t, good, f) }
	withFile := func(e entry) v1.Image {
		l, err := layer(o.Epoch, []entry{e})
		if err != nil {
			t.Fatal(err)
		}
		bad, err := mutate.AppendLayers(good, l)
		if err != nil {
			t.Fatal(err)
		}
		return bad
	}
	dynamic, err := os.ReadFile("/bin/true") // dynamically linked on every Linux distribution we know
	if err != nil {
		t.Skip("no /bin/true to stand in for a dynamic binary")
	}
	for _, tc := range []struct {
		name, want string
		img        v1.Image
	}{
		{"root user", "user", withConfig(func(c *v1.Config) { c.User = "0:0" })},
		{"shell entrypoint", "entrypoint", withConfig(func(c *v1.Config) { c.Entrypoint = []string{"/bin/sh", "-c"} })},
		{"wrong version label", "org.opencontainers.image.version", withConfig(func(c *v1.Config) { c.Labels["org.opencontainers.image.version"] = "v9" })},
		{"no CA certificates", "certificates", withFile(entry{name: caFile, mode: 0o644})},
		{"writable binary", "mode", withFile(entry{name: img, mode: 0o777, data: dynamic})},
		{"dynamic binary", "dynamically linked", withFile(entry{name: img, mode: 0o755, data: dynamic})},
		{"passwd owned by nonroot", "owned by", withFile(entry{name: "etc/passwd", mode: 0o644, uid: 65532, data: []byte(passwd)})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			errs := checkImage(o, img, hostPlatfm, tc.img)
			for _, e := range errs {
				if strings.Contains(e.Error(), tc.want) {
					return
				}
			}
			t.Errorf("checkImage found %v, want an error about %q", errs, tc.want)
		})
	}
}

// hostImage is the host platform's image of name.
func hostImage(t *testing.T, o Options, name string) v1.Image {
	t.Helper()
	dir := filepath.Join(o.Out, name)
	desc, err := imageIndexDescriptor(dir)
	if err != nil {
		t.Fatal(err)
	}
	lp, err := layout.FromPath(dir)
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
	for _, d := range m.Manifests {
		if d.Platform != nil && d.Platform.Equals(hostPlatfm) {
			img, err := idx.Image(d.Digest)
			if err != nil {
				t.Fatal(err)
			}
			return img
		}
	}
	t.Fatalf("%s has no %s image", name, hostPlatfm)
	return nil
}

// TestChecksCatchBrokenCSIImages does the same for the CSI images: a
// missing library, loader, tool or file, no PATH, the CCMs' user, a tool
// of another driver's set.
func TestChecksCatchBrokenCSIImages(t *testing.T) {
	type broken struct {
		name, want string
		img        v1.Image
	}
	for _, img := range []string{"digitalocean-csi-driver", "triton-csi-driver"} {
		o, _ := imageOptions(t, img)
		good := hostImage(t, o, img)
		if errs := checkImage(o, img, hostPlatfm, good); len(errs) > 0 {
			t.Fatalf("the good %s image fails: %v", img, errs)
		}
		files, err := readFiles(good, o.Epoch)
		if err != nil {
			t.Fatal(err)
		}
		// find is the path of the image's file whose name starts with base.
		find := func(base string) string {
			for n := range files {
				if strings.HasPrefix(path.Base(n), base) {
					return n
				}
			}
			t.Fatalf("the good %s image has no %s*", img, base)
			return ""
		}
		// with adds the entries es to the image.
		with := func(es ...entry) v1.Image {
			l, err := layer(o.Epoch, es)
			if err != nil {
				t.Fatal(err)
			}
			bad, err := mutate.AppendLayers(good, l)
			if err != nil {
				t.Fatal(err)
			}
			return bad
		}
		// without removes file n from the image with an OCI whiteout.
		without := func(n string) v1.Image {
			return with(entry{name: path.Join(path.Dir(n), ".wh."+path.Base(n)), mode: 0o644})
		}
		withConfig := func(f func(*v1.Config)) v1.Image { return configured(t, good, f) }
		var cases []broken
		switch img {
		case "digitalocean-csi-driver":
			cases = []broken{
				{"missing library", "needs libblkid.so.1", without(find("libblkid.so.1"))},
				{"missing loader", "interpreter", without(find("ld-linux-"))},
				{"missing tool", "no mkfs.xfs on PATH", without(find("mkfs.xfs"))},
				{"no /bin/sh", "/bin/sh", without("bin/sh")},
				{"no PATH", "env", withConfig(func(c *v1.Config) { c.Env = nil })},
				{"nonroot user", "user", withConfig(func(c *v1.Config) { c.User = user })},
				{"another driver's tool", "has /sbin/mount.nfs", with(entry{name: "sbin/mount.nfs", mode: 0o755, data: []byte("#!/bin/sh\n")})},
			}
		case "triton-csi-driver":
			cases = []broken{
				{"missing NFS helper", "no mount.nfs on PATH", without("sbin/mount.nfs")},
				{"NFS helper off /sbin", "no /sbin/mount.nfs", with(entry{name: "sbin/.wh.mount.nfs", mode: 0o644},
					entry{name: "usr/sbin/mount.nfs", mode: 0o755, data: files["sbin/mount.nfs"].data})},
				{"missing /etc/protocols", "no /etc/protocols", without("etc/protocols")},
			}
		}
		for _, tc := range cases {
			t.Run(img+"/"+tc.name, func(t *testing.T) {
				errs := checkImage(o, img, hostPlatfm, tc.img)
				for _, e := range errs {
					if strings.Contains(e.Error(), tc.want) {
						return
					}
				}
				t.Errorf("checkImage found %v, want an error about %q", errs, tc.want)
			})
		}
	}
}

// configured is img with f applied to its config.
func configured(t *testing.T, img v1.Image, f func(*v1.Config)) v1.Image {
	t.Helper()
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	f(&cf.Config)
	out, err := mutate.Config(img, cf.Config)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

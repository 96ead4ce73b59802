package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// module is the import path of the repository the images are built from.
const module = "github.com/ccmkit/ccmkit"

// Options says what Build builds and where it writes.
type Options struct {
	// Root is the repository checkout; Out the directory the layouts,
	// SBOMs and digests.txt go to.
	Root, Out string
	// Version is the image tag, the binaries' --version and the
	// org.opencontainers.image.version label; Revision the commit.
	Version, Revision string
	// Epoch is every timestamp in the images and SBOMs
	// (SOURCE_DATE_EPOCH): the commit time, or the Unix epoch.
	Epoch time.Time
	// Platforms are the index's platforms, in order.
	Platforms []v1.Platform
	// Names are the images to build; empty means every
	// cmd/*-cloud-controller-manager and cmd/*-csi-driver.
	Names []string
	// DebianCache is where the locked Debian packages of the CSI images
	// are downloaded to and reused from (<Out>/../debian-cache).
	DebianCache string
}

// Built is one image Build wrote.
type Built struct {
	Name   string
	Digest v1.Hash // of the image index
}

// defaultOptions reads version, revision and commit time from git as the
// Makefile does; outside a git checkout they are "dev", "" and 0. A
// non-empty epoch (SOURCE_DATE_EPOCH, seconds) overrides the commit time.
func defaultOptions(ctx context.Context, root, epoch string) (Options, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return Options{}, err
	}
	if _, err := os.Stat(filepath.Join(abs, "go.mod")); err != nil {
		return Options{}, fmt.Errorf("-root %s is not the ccmkit repository: %w", root, err)
	}
	o := Options{Root: abs, Out: filepath.Join(abs, "bin", "images"), DebianCache: filepath.Join(abs, "bin", "debian-cache"),
		Version: "dev", Epoch: time.Unix(0, 0).UTC()}
	if v, err := git(ctx, abs, "describe", "--tags", "--always", "--dirty"); err == nil {
		o.Version = v
	}
	if r, err := git(ctx, abs, "rev-parse", "HEAD"); err == nil {
		o.Revision = r
	}
	if epoch == "" {
		epoch, _ = git(ctx, abs, "log", "-1", "--format=%ct")
	}
	if epoch != "" {
		sec, err := strconv.ParseInt(epoch, 10, 64)
		if err != nil {
			return Options{}, fmt.Errorf("SOURCE_DATE_EPOCH %q: %w", epoch, err)
		}
		o.Epoch = time.Unix(sec, 0).UTC()
	}
	return o, nil
}

func git(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	return strings.TrimSpace(string(out)), err
}

// parsePlatforms parses "linux/amd64,linux/arm64".
func parsePlatforms(s string) ([]v1.Platform, error) {
	var ps []v1.Platform
	for f := range strings.SplitSeq(s, ",") {
		p, err := v1.ParsePlatform(strings.TrimSpace(f))
		if err != nil {
			return nil, fmt.Errorf("-platforms %q: %w", f, err)
		}
		if p.OS != "linux" || p.Architecture == "" {
			return nil, fmt.Errorf("-platforms %q: want linux/<arch>", f)
		}
		if slices.ContainsFunc(ps, func(q v1.Platform) bool { return q.Equals(*p) }) {
			return nil, fmt.Errorf("-platforms %q: listed twice", f)
		}
		ps = append(ps, *p)
	}
	if len(ps) == 0 {
		return nil, errors.New("-platforms: none given")
	}
	return ps, nil
}

// The suffixes of the commands that get an image.
const (
	ccmSuffix = "-cloud-controller-manager"
	csiSuffix = "-csi-driver"
)

// commands lists the binaries of the repository that get an image:
// cmd/*-cloud-controller-manager and cmd/*-csi-driver, sorted.
func commands(root string) ([]string, error) {
	var names []string
	for _, suffix := range []string{ccmSuffix, csiSuffix} {
		dirs, err := filepath.Glob(filepath.Join(root, "cmd", "*"+suffix))
		if err != nil {
			return nil, err
		}
		for _, d := range dirs {
			names = append(names, filepath.Base(d))
		}
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("no cmd/*%s or cmd/*%s under %s", ccmSuffix, csiSuffix, root)
	}
	slices.Sort(names)
	return names, nil
}

// isCSI says whether name is a CSI driver's image.
func isCSI(name string) bool { return strings.HasSuffix(name, csiSuffix) }

// Build compiles the binaries, assembles one image index per binary and
// writes each as an OCI layout <Out>/<name>/ with its SBOM <Out>/<name>.spdx.json,
// then <Out>/digests.txt for every image of Out.
func Build(ctx context.Context, o Options) ([]Built, error) {
	all, err := commands(o.Root)
	if err != nil {
		return nil, err
	}
	names := all
	if len(o.Names) > 0 {
		for _, n := range o.Names {
			if !slices.Contains(all, n) {
				return nil, fmt.Errorf("no cmd/%s in %s (have %s)", n, o.Root, strings.Join(all, ", "))
			}
		}
		names = o.Names
	}
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return nil, err
	}
	work, err := os.MkdirTemp(o.Out, ".build-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)

	base, err := baseLayer(o.Epoch)
	if err != nil {
		return nil, err
	}
	// The node tools layers of each platform, built for the first CSI
	// image and shared by the others.
	tools := map[string]map[string]toolsLayerOf{} // platform -> set name -> layer
	toolsFor := func(p v1.Platform, sets []toolSet) ([]toolsLayerOf, error) {
		if _, ok := tools[p.String()]; !ok {
			l, err := toolsLayers(ctx, o, p)
			if err != nil {
				return nil, fmt.Errorf("the node tools layers for %s: %w", p, err)
			}
			tools[p.String()] = l
		}
		var ls []toolsLayerOf
		for _, s := range sets {
			ls = append(ls, tools[p.String()][s.name])
		}
		return ls, nil
	}
	// One image at a time, its binaries removed once its layout is
	// written: the disk holds one image's binaries, not every image's.
	var built []Built
	for _, n := range names {
		var layers imageLayers
		if sets := imageToolSets(n); len(sets) > 0 {
			layers.tools = map[string][]toolsLayerOf{}
			for _, p := range o.Platforms {
				ls, err := toolsFor(p, sets)
				if err != nil {
					return nil, err
				}
				layers.tools[p.String()] = ls
			}
		}
		layers.base = base
		bins := map[string]string{} // platform -> binary
		for _, p := range o.Platforms {
			dir := filepath.Join(work, strings.ReplaceAll(p.String(), "/", "_"))
			if err := goBuild(ctx, o, p, []string{n}, dir); err != nil {
				return nil, err
			}
			bins[p.String()] = filepath.Join(dir, n)
		}
		b, err := assemble(o, n, layers, func(p v1.Platform) string { return bins[p.String()] })
		if err != nil {
			return nil, fmt.Errorf("%s: %w", n, err)
		}
		built = append(built, b)
		for _, bin := range bins {
			if err := os.Remove(bin); err != nil {
				return nil, err
			}
		}
	}
	return built, writeDigests(o.Out)
}

// goBuild builds the named commands for platform p into dir: static
// (CGO_ENABLED=0), without paths or build IDs that differ between
// checkouts, with the version stamped as the Makefile's LDFLAGS do. The
// environment is pinned so that a user's GOFLAGS or GOAMD64 cannot change
// the bytes.
func goBuild(ctx context.Context, o Options, p v1.Platform, names []string, dir string) error {
	args := []string{"build", "-trimpath", "-buildvcs=false", "-o", dir + string(filepath.Separator),
		"-ldflags", "-s -w -buildid= -X " + module + "/framework.version=" + o.Version + " -X " + module + "/framework/csi.version=" + o.Version}
	for _, n := range names {
		args = append(args, "./cmd/"+n)
	}
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = o.Root
	cmd.Env = append(cmd.Environ(), "CGO_ENABLED=0", "GOOS="+p.OS, "GOARCH="+p.Architecture,
		"GOFLAGS=", "GOEXPERIMENT=", "GOAMD64=v1", "GOARM64=v8.0", "GO386=sse2", "GOARM=7")
	if p.Architecture == "arm" && p.Variant != "" {
		cmd.Env = append(cmd.Env, "GOARM="+strings.TrimPrefix(p.Variant, "v"))
	}
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build for %s: %w", p, err)
	}
	return nil
}

// writeDigests writes <out>/digests.txt: "<name> <index digest>" for every
// layout in out, sorted, so two builds compare with diff.
func writeDigests(out string) error {
	entries, err := os.ReadDir(out)
	if err != nil {
		return err
	}
	var b strings.Builder
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		d, err := layoutIndexDigest(filepath.Join(out, e.Name()))
		if err != nil {
			return fmt.Errorf("%s: %w", e.Name(), err)
		}
		fmt.Fprintf(&b, "%s %s\n", e.Name(), d)
	}
	return os.WriteFile(filepath.Join(out, "digests.txt"), []byte(b.String()), 0o644)
}

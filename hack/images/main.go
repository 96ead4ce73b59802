// Command images builds ccmkit's container images without a container
// runtime: for every cmd/*-cloud-controller-manager and cmd/*-csi-driver
// of the repository it runs `go build` (static, -trimpath, version from
// git) for each platform and assembles a multi-arch OCI image index with
// go-containerregistry, written as an OCI image layout under
// bin/images/<name>/ together with an SPDX SBOM attached to the index as an
// OCI 1.1 artifact. The images are reproducible: every timestamp is the
// commit time, every file is owned by root and sorted, so two clean clones
// give the same digests (bin/images/digests.txt). -push copies them to a
// registry.
//
// A CSI driver's node plugin runs mount, mkfs, fsck and resize tools, so
// its image has one more layer: those tools, the shared libraries they
// load and the dynamic loader, taken from the Debian bookworm packages
// pinned in debian.lock (downloaded once into bin/debian-cache, checked
// against their SHA-256). A driver that runs more has a layer of those
// above it (extraTools): triton-csi-driver, whose volumes are NFS
// exports, the NFS client's mount.nfs. -update-debian-lock rewrites the
// lock from the mirror's current package index.
//
// It is a module of its own, so that go-containerregistry never reaches the
// library's go.mod; it builds the root module with the go command and does
// not import it. `make images` runs it; `go test ./...` here builds the
// images for the host platform and checks them.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "images:", err)
		os.Exit(1)
	}
}

func run() error {
	var (
		root      = flag.String("root", "../..", "the ccmkit repository to build")
		out       = flag.String("out", "", "output directory (default <root>/bin/images)")
		version   = flag.String("version", "", "image tag and --version of the binaries (default: git describe --tags --always --dirty, as the Makefile)")
		platforms = flag.String("platforms", "linux/amd64,linux/arm64", "comma-separated os/arch[/variant] list")
		only      = flag.String("only", "", "comma-separated image names to build (default: every cmd/*-cloud-controller-manager)")
		push      = flag.String("push", "", "registry (host[/path]) to push each image to as <registry>/<name>:<version>, with its SBOM")
		cache     = flag.String("debian-cache", "", "directory of the downloaded Debian packages (default <out>/../debian-cache)")
		lock      = flag.Bool("update-debian-lock", false, "rewrite "+lockPath+" from the mirror's current "+debianSuite+" packages for -platforms, and build nothing")
	)
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	opts, err := defaultOptions(ctx, *root, os.Getenv("SOURCE_DATE_EPOCH")) //nolint:forbidigo // a command reads its environment in main; the reproducible-builds variable
	if err != nil {
		return err
	}
	if *out != "" {
		opts.Out = *out
		opts.DebianCache = filepath.Join(filepath.Dir(opts.Out), "debian-cache")
	}
	if *cache != "" {
		opts.DebianCache = *cache
	}
	if *version != "" {
		opts.Version = *version
	}
	if opts.Platforms, err = parsePlatforms(*platforms); err != nil {
		return err
	}
	if *lock {
		pkgs, err := updateDebianLock(ctx, opts)
		if err != nil {
			return err
		}
		fmt.Printf("wrote %d packages to %s\n", len(pkgs), filepath.Join(opts.Root, lockPath))
		return nil
	}
	if *only != "" {
		opts.Names = strings.Split(*only, ",")
	}
	built, err := Build(ctx, opts)
	if err != nil {
		return err
	}
	for _, b := range built {
		fmt.Printf("%s %s %s\n", b.Name, b.Digest, filepath.Join(opts.Out, b.Name))
	}
	if *push == "" {
		return nil
	}
	for _, b := range built {
		ref, err := Push(ctx, filepath.Join(opts.Out, b.Name), *push, b.Name, opts.Version)
		if err != nil {
			return err
		}
		fmt.Printf("pushed %s@%s\n", ref, b.Digest)
	}
	return nil
}

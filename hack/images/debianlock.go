package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ulikunitz/xz"
	"pault.ag/go/debian/control"
	"pault.ag/go/debian/dependency"
)

// debianRoots are the packages that ship nodeTools and configFiles, the
// roots of commonTools: mount (mount, umount), util-linux (blkid,
// blockdev, fsck), e2fsprogs, xfsprogs and dash.
var debianRoots = []string{"mount", "util-linux", "e2fsprogs", "xfsprogs", "dash"}

// updateDebianLock rewrites the lock from the mirror's current bookworm
// Packages index for the Debian architecture of every platform: the roots
// of every toolSets, and of their dependencies only the packages that
// provide a shared library the tools need. Following Depends instead would
// lock python3, libicu and dpkg (xfsprogs', dash's and nfs-common's
// dependencies for files the layers leave out): a library an ELF file
// needs comes from a direct dependency of its package (Debian policy 8.6),
// so each round looks among those, the package the policy names after the
// soname first, then by size, and downloads a candidate only to read its
// files.
func updateDebianLock(ctx context.Context, o Options) ([]debPackage, error) {
	var lock []debPackage
	for _, p := range o.Platforms {
		arch, err := debianArch(p)
		if err != nil {
			return nil, err
		}
		if slices.ContainsFunc(lock, func(d debPackage) bool { return d.Arch == arch }) {
			continue
		}
		pkgs, err := lockArch(ctx, o.DebianCache, arch)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", arch, err)
		}
		lock = append(lock, pkgs...)
	}
	if err := writeLock(filepath.Join(o.Root, lockPath), lock); err != nil {
		return nil, err
	}
	return lock, pruneCache(o.DebianCache, lock)
}

// pruneCache removes the .debs of cache the lock does not name: the
// candidates that provided no library, and older versions.
func pruneCache(cache string, lock []debPackage) error {
	debs, err := filepath.Glob(filepath.Join(cache, "*.deb"))
	if err != nil {
		return err
	}
	for _, f := range debs {
		if !slices.ContainsFunc(lock, func(d debPackage) bool { return path.Base(d.Filename) == filepath.Base(f) }) {
			if err := os.Remove(f); err != nil {
				return err
			}
		}
	}
	return nil
}

// lockArch resolves the packages of one architecture.
func lockArch(ctx context.Context, cache, arch string) ([]debPackage, error) {
	index, err := packagesIndex(ctx, arch)
	if err != nil {
		return nil, err
	}
	get := func(name string) (debPackage, *control.BinaryIndex, error) {
		bi, ok := index[name]
		if !ok {
			return debPackage{}, nil, fmt.Errorf("no package %s in %s/%s", name, debianSuite, arch)
		}
		return debPackage{Arch: arch, Name: bi.Package, Version: bi.Version.String(), Filename: bi.Filename, SHA256: bi.SHA256, Size: int64(bi.Size)}, bi, nil
	}
	t := tree{}
	var used []debPackage
	trees := map[string]tree{} // the packages downloaded, used or not
	treeOf := func(name string) (tree, error) {
		if pt, ok := trees[name]; ok {
			return pt, nil
		}
		d, _, err := get(name)
		if err != nil {
			return nil, err
		}
		raw, err := fetchDeb(ctx, cache, d)
		if err != nil {
			return nil, err
		}
		pt := tree{}
		if err := pt.add(raw, d.Name); err != nil {
			return nil, err
		}
		trees[name] = pt
		return pt, nil
	}
	use := func(name string) error {
		pt, err := treeOf(name)
		if err != nil {
			return err
		}
		for n, f := range pt {
			if _, ok := t[n]; !ok {
				t[n] = f
			}
		}
		d, _, _ := get(name)
		used = append(used, d)
		return nil
	}
	for _, s := range toolSets() {
		for _, r := range s.roots {
			if slices.ContainsFunc(used, func(d debPackage) bool { return d.Name == r }) {
				continue
			}
			if err := use(r); err != nil {
				return nil, err
			}
		}
	}
	for {
		var unresolved []string
		for _, s := range toolSets() {
			_, u, err := t.closure(s)
			if err != nil {
				return nil, err
			}
			for _, so := range u {
				if !slices.Contains(unresolved, so) {
					unresolved = append(unresolved, so)
				}
			}
		}
		if len(unresolved) == 0 {
			break
		}
		found := ""
		for _, c := range candidates(index, used, unresolved) {
			pt, err := treeOf(c)
			if err != nil {
				return nil, err
			}
			if slices.ContainsFunc(unresolved, pt.hasLib) {
				found = c
				break
			}
		}
		if found == "" {
			return nil, fmt.Errorf("no dependency of %v provides %s", names(used), strings.Join(unresolved, ", "))
		}
		if err := use(found); err != nil {
			return nil, err
		}
	}
	// Keep what a layer holds a file of: util-linux's Pre-Depends are
	// many, the tools need a few.
	usedFiles := map[string]bool{}
	for _, s := range toolSets() {
		_, _, u, err := t.toolsEntries(s, nil)
		if err != nil {
			return nil, err
		}
		maps.Copy(usedFiles, u)
	}
	var pkgs []debPackage
	for _, d := range used {
		if usedFiles[d.Name] {
			pkgs = append(pkgs, d)
		}
	}
	return pkgs, nil
}

// hasLib says whether t ships the shared library so, or the loader at
// path so.
func (t tree) hasLib(so string) bool {
	if strings.Contains(so, "/") {
		_, ok := t[so]
		return ok
	}
	return slices.ContainsFunc(t.libDirs(), func(d string) bool { _, ok := t[d+"/"+so]; return ok })
}

// candidates are the direct Depends and Pre-Depends (first alternative, a
// virtual package by its first provider) of used that are not used yet,
// those named after one of the sonames (libfoo.so.1 -> libfoo1) first, then
// the smallest.
func candidates(index map[string]*control.BinaryIndex, used []debPackage, sonames []string) []string {
	var out []string
	for _, d := range used {
		bi := index[d.Name]
		for _, rels := range [][]dependency.Relation{bi.GetPreDepends().Relations, bi.GetDepends().Relations} {
			for _, n := range firstAlternatives(rels) {
				if _, ok := index[n]; !ok {
					n = providerOf(index, n)
				}
				if n != "" && !slices.ContainsFunc(used, func(d debPackage) bool { return d.Name == n }) && !slices.Contains(out, n) {
					out = append(out, n)
				}
			}
		}
	}
	policy := map[string]bool{}
	for _, so := range sonames {
		policy[policyName(so)] = true
	}
	slices.SortStableFunc(out, func(a, b string) int {
		if policy[a] != policy[b] {
			if policy[a] {
				return -1
			}
			return 1
		}
		return index[a].Size - index[b].Size
	})
	return out
}

// firstAlternatives are the names of the first possibility of each relation.
func firstAlternatives(rels []dependency.Relation) []string {
	var n []string
	for _, r := range rels {
		if len(r.Possibilities) > 0 {
			n = append(n, r.Possibilities[0].Name)
		}
	}
	return n
}

// policyName is the package name Debian policy 8.1 gives the library so:
// libfoo.so.1 -> libfoo1, libfoo-2.so.0 -> libfoo-2-0, lowercase, _ -> -.
func policyName(so string) string {
	name, ver, ok := strings.Cut(so, ".so.")
	if !ok {
		return so
	}
	if name != "" && name[len(name)-1] >= '0' && name[len(name)-1] <= '9' {
		name += "-"
	}
	return strings.ReplaceAll(strings.ToLower(name+ver), "_", "-")
}

// providerOf is the first package that Provides virtual.
func providerOf(index map[string]*control.BinaryIndex, virtual string) string {
	var found []string
	for n, bi := range index {
		for p := range strings.SplitSeq(bi.Values["Provides"], ",") {
			if f := strings.Fields(p); len(f) > 0 && f[0] == virtual {
				found = append(found, n)
			}
		}
	}
	slices.Sort(found)
	if len(found) == 0 {
		return ""
	}
	return found[0]
}

func names(pkgs []debPackage) []string {
	var n []string
	for _, p := range pkgs {
		n = append(n, p.Name)
	}
	return n
}

// packagesIndex reads dists/bookworm/main/binary-<arch>/Packages.xz.
func packagesIndex(ctx context.Context, arch string) (map[string]*control.BinaryIndex, error) {
	url := debianMirror + "/dists/" + debianSuite + "/main/binary-" + arch + "/Packages.xz"
	raw, err := httpGet(ctx, url)
	if err != nil {
		return nil, err
	}
	r, err := xz.NewReader(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", url, err)
	}
	list, err := control.ParseBinaryIndex(bufio.NewReaderSize(r, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", url, err)
	}
	index := make(map[string]*control.BinaryIndex, len(list))
	for i := range list {
		index[list[i].Package] = &list[i]
	}
	return index, nil
}

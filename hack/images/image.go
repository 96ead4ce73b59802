package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/match"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/partial"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

const (
	// source is the org.opencontainers.image.source label.
	source = "https://" + module
	// user is a CCM image's user: nonroot, as the manifests' securityContext.
	user = "65532:65532"
	// csiUser is a CSI image's user: root, as the node plugin formats and
	// mounts; the controller's manifest runs it as 65532.
	csiUser = "0:0"
	// refName annotates the index in the layout's index.json with its tag.
	refName = "org.opencontainers.image.ref.name"
)

// labels are the OCI labels of the image config, also the annotations of
// its manifests and index.
func labels(o Options, name string) map[string]string {
	desc := "Kubernetes cloud-controller-manager for " + strings.TrimSuffix(name, ccmSuffix) + ", built with ccmkit"
	if isCSI(name) {
		desc = "Kubernetes CSI driver for " + strings.TrimSuffix(name, csiSuffix) + ", built with ccmkit"
	}
	return map[string]string{
		"org.opencontainers.image.source":      source,
		"org.opencontainers.image.url":         source,
		"org.opencontainers.image.revision":    o.Revision,
		"org.opencontainers.image.version":     o.Version,
		"org.opencontainers.image.created":     o.Epoch.Format("2006-01-02T15:04:05Z"),
		"org.opencontainers.image.title":       name,
		"org.opencontainers.image.description": desc,
		"org.opencontainers.image.licenses":    "Apache-2.0",
	}
}

// imageLayers are the layers an image has below its binary: base, and for
// a CSI image the node tools layers of each platform (imageToolSets).
type imageLayers struct {
	base  v1.Layer
	tools map[string][]toolsLayerOf // by platform
}

// toolsLayerOf is a node tools layer, what it holds and the Debian
// packages it holds files of.
type toolsLayerOf struct {
	set   toolSet
	layer v1.Layer
	pkgs  []debPackage
}

// platformImage builds the image of binary bin for platform p.
func platformImage(o Options, name string, p v1.Platform, layers imageLayers, bin string) (v1.Image, error) {
	data, err := os.ReadFile(bin)
	if err != nil {
		return nil, err
	}
	top, err := binaryLayer(o.Epoch, name, data)
	if err != nil {
		return nil, err
	}
	created := v1.Time{Time: o.Epoch}
	cfg := &v1.ConfigFile{
		Architecture: p.Architecture, OS: p.OS, Variant: p.Variant, Created: created,
		RootFS: v1.RootFS{Type: "layers"},
		Config: v1.Config{
			Entrypoint: []string{"/" + name}, User: user, WorkingDir: "/",
			Labels: labels(o, name),
		},
	}
	adds := []mutate.Addendum{{Layer: layers.base, History: v1.History{Created: created, CreatedBy: "ccmkit hack/images: CA certificates, users, /tmp"}}}
	if isCSI(name) {
		// exec.LookPath needs PATH to find the tools.
		cfg.Config.User, cfg.Config.Env = csiUser, []string{toolsPath}
		for _, t := range layers.tools[p.String()] {
			adds = append(adds, mutate.Addendum{Layer: t.layer,
				History: v1.History{Created: created, CreatedBy: "ccmkit hack/images: " + t.set.name + " from Debian " + debianSuite + " (" + lockPath + ")"}})
		}
	}
	img, err := mutate.ConfigFile(empty.Image, cfg)
	if err != nil {
		return nil, err
	}
	adds = append(adds, mutate.Addendum{Layer: top, History: v1.History{Created: created, CreatedBy: "ccmkit hack/images: /" + name}})
	img, err = mutate.Append(img, adds...)
	if err != nil {
		return nil, err
	}
	img = mutate.ConfigMediaType(mutate.MediaType(img, types.OCIManifestSchema1), types.OCIConfigJSON)
	return mutate.Annotations(img, labels(o, name)).(v1.Image), nil
}

// assemble builds name's index over o.Platforms from the binaries binFor
// gives, its SBOM, and writes both as the OCI layout <Out>/<name>/ (the
// index tagged o.Version, the SBOM an artifact whose subject is the index)
// and <Out>/<name>.spdx.json. The layout replaces any earlier one whole.
func assemble(o Options, name string, layers imageLayers, binFor func(v1.Platform) string) (Built, error) {
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	var debs []debPackage
	for _, p := range o.Platforms {
		for _, t := range layers.tools[p.String()] {
			for _, d := range t.pkgs {
				if !slices.Contains(debs, d) {
					debs = append(debs, d)
				}
			}
		}
		img, err := platformImage(o, name, p, layers, binFor(p))
		if err != nil {
			return Built{}, fmt.Errorf("%s: %w", p, err)
		}
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &p}})
	}
	idx = mutate.Annotations(idx, labels(o, name)).(v1.ImageIndex)
	desc, err := partial.Descriptor(idx)
	if err != nil {
		return Built{}, err
	}
	doc, err := sbom(o, name, binFor(o.Platforms[0]), desc.Digest, debs)
	if err != nil {
		return Built{}, err
	}
	art, err := sbomArtifact(doc, *desc)
	if err != nil {
		return Built{}, err
	}

	dir := filepath.Join(o.Out, name)
	tmp := dir + ".tmp"
	if err := os.RemoveAll(tmp); err != nil {
		return Built{}, err
	}
	lp, err := layout.Write(tmp, empty.Index)
	if err != nil {
		return Built{}, err
	}
	if err := lp.AppendIndex(idx, layout.WithAnnotations(map[string]string{refName: o.Version})); err != nil {
		return Built{}, err
	}
	if err := lp.AppendImage(art); err != nil {
		return Built{}, err
	}
	if err := os.RemoveAll(dir); err != nil {
		return Built{}, err
	}
	if err := os.Rename(tmp, dir); err != nil {
		return Built{}, err
	}
	if err := os.WriteFile(dir+".spdx.json", doc, 0o644); err != nil {
		return Built{}, err
	}
	return Built{Name: name, Digest: desc.Digest}, nil
}

// layoutIndexDigest is the digest of the image index in the layout at dir.
func layoutIndexDigest(dir string) (v1.Hash, error) {
	d, err := imageIndexDescriptor(dir)
	if err != nil {
		return v1.Hash{}, err
	}
	return d.Digest, nil
}

// imageIndexDescriptor finds the one image index of the layout at dir.
func imageIndexDescriptor(dir string) (v1.Descriptor, error) {
	ii, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		return v1.Descriptor{}, err
	}
	m, err := ii.IndexManifest()
	if err != nil {
		return v1.Descriptor{}, err
	}
	var found []v1.Descriptor
	for _, d := range m.Manifests {
		if match.MediaTypes(string(types.OCIImageIndex))(d) {
			found = append(found, d)
		}
	}
	if len(found) != 1 {
		return v1.Descriptor{}, fmt.Errorf("layout %s has %d image indexes, want 1", dir, len(found))
	}
	return found[0], nil
}

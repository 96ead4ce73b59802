package main

import (
	"context"
	"fmt"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Push copies the image index of the layout at dir to
// <registry>/<name>:<tag>, then the artifacts that name it as their subject
// (the SBOM) by digest, so the registry lists them as its referrers.
// Credentials come from the docker config as docker and crane read them.
func Push(ctx context.Context, dir, registry, image, tag string) (name.Reference, error) {
	ref, err := name.NewTag(registry + "/" + image + ":" + tag)
	if err != nil {
		return nil, fmt.Errorf("-push %s: %w", registry, err)
	}
	opts := []remote.Option{remote.WithContext(ctx), remote.WithAuthFromKeychain(authn.DefaultKeychain)}
	lp, err := layout.FromPath(dir)
	if err != nil {
		return nil, err
	}
	desc, err := imageIndexDescriptor(dir)
	if err != nil {
		return nil, err
	}
	idx, err := lp.ImageIndex()
	if err != nil {
		return nil, err
	}
	img, err := idx.ImageIndex(desc.Digest)
	if err != nil {
		return nil, err
	}
	if err := remote.WriteIndex(ref, img, opts...); err != nil {
		return nil, fmt.Errorf("pushing %s: %w", ref, err)
	}
	m, err := idx.IndexManifest()
	if err != nil {
		return nil, err
	}
	for _, d := range m.Manifests {
		if d.ArtifactType == "" || d.MediaType != types.OCIManifestSchema1 {
			continue
		}
		art, err := idx.Image(d.Digest)
		if err != nil {
			return nil, err
		}
		am, err := art.Manifest()
		if err != nil {
			return nil, err
		}
		if am.Subject == nil || am.Subject.Digest != desc.Digest {
			continue
		}
		if err := remote.Write(ref.Context().Digest(d.Digest.String()), art, opts...); err != nil {
			return nil, fmt.Errorf("pushing %s's %s: %w", ref, d.ArtifactType, err)
		}
	}
	return ref, nil
}

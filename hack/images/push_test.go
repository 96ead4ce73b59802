package main

import (
	"bytes"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// TestPush pushes an image to go-containerregistry's in-memory registry,
// with and without the OCI 1.1 referrers API, and reads back the index by
// tag (same digest as the layout's) and the SBOM as its referrer.
func TestPush(t *testing.T) {
	for _, referrers := range []bool{true, false} {
		t.Run(map[bool]string{true: "referrers API", false: "referrers tag fallback"}[referrers], func(t *testing.T) {
			srv := httptest.NewServer(registry.New(registry.WithReferrersSupport(referrers),
				registry.Logger(log.New(io.Discard, "", 0))))
			defer srv.Close()
			reg := strings.TrimPrefix(srv.URL, "http://") + "/ccmkit"
			const img = "skeleton-cloud-controller-manager"
			o, _ := imageOptions(t, img)
			dir := filepath.Join(o.Out, img)
			want, err := layoutIndexDigest(dir)
			if err != nil {
				t.Fatal(err)
			}
			ref, err := Push(t.Context(), dir, reg, img, o.Version)
			if err != nil {
				t.Fatal(err)
			}
			if ref.String() != reg+"/"+img+":"+o.Version {
				t.Errorf("pushed to %s", ref)
			}
			idx, err := remote.Index(ref)
			if err != nil {
				t.Fatal(err)
			}
			if got, _ := idx.Digest(); got != want {
				t.Errorf("registry has %s:%s at %s, the layout %s", img, o.Version, got, want)
			}
			checkPushedSBOM(t, ref.Context().Digest(want.String()), dir+".spdx.json")
		})
	}
}

// checkPushedSBOM finds the SBOM among subject's referrers by the
// artifactType of its manifest (go-containerregistry's registry reports the
// config media type in the referrers list instead) and compares it with file.
func checkPushedSBOM(t *testing.T, subject name.Digest, file string) {
	t.Helper()
	refs, err := remote.Referrers(subject)
	if err != nil {
		t.Fatal(err)
	}
	m, err := refs.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	var sboms []v1.Image
	for _, d := range m.Manifests {
		img, err := remote.Image(subject.Context().Digest(d.Digest.String()))
		if err != nil {
			t.Fatal(err)
		}
		if am, err := img.Manifest(); err == nil && am.ArtifactType == sbomType {
			sboms = append(sboms, img)
		}
	}
	if len(sboms) != 1 {
		t.Fatalf("%s has %d SBOM referrers among %d, want 1", subject, len(sboms), len(m.Manifests))
	}
	art := sboms[0]
	ls, err := art.Layers()
	if err != nil || len(ls) != 1 {
		t.Fatalf("SBOM artifact layers %v (%v), want 1", ls, err)
	}
	rc, err := ls[0].Compressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	got, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("the pushed SBOM differs from %s", file)
	}
}

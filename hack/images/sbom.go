package main

import (
	"bytes"
	"debug/buildinfo"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"runtime/debug"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/partial"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// sbomType is the SBOM's media type and the artifactType of the manifest
// that attaches it to an index.
const sbomType = "application/spdx+json"

// The SPDX 2.3 document, with the fields ccmkit fills.
type (
	spdxDoc struct {
		SPDXVersion       string         `json:"spdxVersion"`
		DataLicense       string         `json:"dataLicense"`
		SPDXID            string         `json:"SPDXID"`
		Name              string         `json:"name"`
		DocumentNamespace string         `json:"documentNamespace"`
		CreationInfo      spdxCreation   `json:"creationInfo"`
		Packages          []spdxPackage  `json:"packages"`
		Relationships     []spdxRelation `json:"relationships"`
	}
	spdxCreation struct {
		Created  string   `json:"created"`
		Creators []string `json:"creators"`
	}
	spdxPackage struct {
		SPDXID           string         `json:"SPDXID"`
		Name             string         `json:"name"`
		VersionInfo      string         `json:"versionInfo,omitempty"`
		PrimaryPurpose   string         `json:"primaryPackagePurpose,omitempty"`
		DownloadLocation string         `json:"downloadLocation"`
		FilesAnalyzed    bool           `json:"filesAnalyzed"`
		Checksums        []spdxChecksum `json:"checksums,omitempty"`
		ExternalRefs     []spdxRef      `json:"externalRefs,omitempty"`
	}
	spdxChecksum struct {
		Algorithm string `json:"algorithm"`
		Value     string `json:"checksumValue"`
	}
	spdxRef struct {
		Category string `json:"referenceCategory"`
		Type     string `json:"referenceType"`
		Locator  string `json:"referenceLocator"`
	}
	spdxRelation struct {
		Element string `json:"spdxElementId"`
		Type    string `json:"relationshipType"`
		Related string `json:"relatedSpdxElement"`
	}
)

// sbom is the SPDX 2.3 JSON document of image name (index digest idx): the
// image, the Go module the binary bin was built from (at o.Version), the Go
// standard library and every module the binary's build info lists, with its
// version, its go.sum hash (h1:, a SHA-256) and a pkg:golang purl, and
// the Debian packages debs (a CSI image's node tools) with their version,
// .deb SHA-256 and a pkg:deb purl per architecture. It is a
// function of its inputs only: created is o.Epoch and the namespace is
// derived from the name, version and revision.
func sbom(o Options, name, bin string, idx v1.Hash, debs []debPackage) ([]byte, error) {
	bi, err := buildinfo.ReadFile(bin)
	if err != nil {
		return nil, fmt.Errorf("reading the build info of %s: %w", bin, err)
	}
	if bi.Main.Path != module {
		return nil, fmt.Errorf("%s was built from %s, not %s", bin, bi.Main.Path, module)
	}
	rev := o.Revision
	if rev == "" {
		rev = "unknown"
	}
	doc := spdxDoc{
		SPDXVersion: "SPDX-2.3", DataLicense: "CC0-1.0", SPDXID: "SPDXRef-DOCUMENT",
		Name:              name + "-" + o.Version,
		DocumentNamespace: source + "/spdx/" + name + "/" + o.Version + "/" + rev,
		CreationInfo: spdxCreation{
			Created:  o.Epoch.Format("2006-01-02T15:04:05Z"),
			Creators: []string{"Organization: ccmkit", "Tool: ccmkit-hack-images"},
		},
	}
	image := spdxPackage{
		SPDXID: "SPDXRef-Image", Name: name, VersionInfo: o.Version, PrimaryPurpose: "CONTAINER",
		DownloadLocation: "NOASSERTION",
		Checksums:        []spdxChecksum{{Algorithm: "SHA256", Value: idx.Hex}},
		ExternalRefs:     []spdxRef{purl("pkg:oci/" + name + "@" + "sha256%3A" + idx.Hex)},
	}
	main := goPackage("SPDXRef-Package-main", &debug.Module{Path: module, Version: o.Version})
	main.PrimaryPurpose, main.DownloadLocation = "APPLICATION", source
	std := goPackage("SPDXRef-Package-stdlib", &debug.Module{Path: "stdlib", Version: bi.GoVersion})
	doc.Packages = []spdxPackage{image, main, std}
	doc.Relationships = []spdxRelation{
		{"SPDXRef-DOCUMENT", "DESCRIBES", image.SPDXID},
		{image.SPDXID, "CONTAINS", main.SPDXID},
		{main.SPDXID, "DEPENDS_ON", std.SPDXID},
	}
	for i, d := range bi.Deps {
		if d.Replace != nil {
			d = d.Replace
		}
		p := goPackage(fmt.Sprintf("SPDXRef-Package-%d-%s", i, spdxID.ReplaceAllString(d.Path, "-")), d)
		doc.Packages = append(doc.Packages, p)
		doc.Relationships = append(doc.Relationships, spdxRelation{main.SPDXID, "DEPENDS_ON", p.SPDXID})
	}
	for _, d := range debs {
		p := spdxPackage{
			SPDXID: "SPDXRef-Deb-" + spdxID.ReplaceAllString(d.Name+"-"+d.Arch, "-"),
			Name:   d.Name, VersionInfo: d.Version, DownloadLocation: debianMirror + "/" + d.Filename,
			Checksums:    []spdxChecksum{{Algorithm: "SHA256", Value: d.SHA256}},
			ExternalRefs: []spdxRef{purl(d.purl())},
		}
		doc.Packages = append(doc.Packages, p)
		doc.Relationships = append(doc.Relationships, spdxRelation{image.SPDXID, "CONTAINS", p.SPDXID})
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// spdxID matches what an SPDX identifier may not hold.
var spdxID = regexp.MustCompile(`[^A-Za-z0-9.-]+`)

func goPackage(id string, m *debug.Module) spdxPackage {
	p := spdxPackage{
		SPDXID: id, Name: m.Path, VersionInfo: m.Version, DownloadLocation: "NOASSERTION",
		ExternalRefs: []spdxRef{purl("pkg:golang/" + m.Path + "@" + m.Version)},
	}
	if m.Path != "stdlib" && m.Path != module {
		p.DownloadLocation = "https://proxy.golang.org/" + m.Path + "/@v/" + m.Version + ".zip"
	}
	if h, ok := strings.CutPrefix(m.Sum, "h1:"); ok {
		if raw, err := base64.StdEncoding.DecodeString(h); err == nil && len(raw) == 32 {
			p.Checksums = []spdxChecksum{{Algorithm: "SHA256", Value: hex.EncodeToString(raw)}}
		}
	}
	return p
}

func purl(locator string) spdxRef {
	return spdxRef{Category: "PACKAGE-MANAGER", Type: "purl", Locator: locator}
}

// sbomArtifact is the OCI 1.1 artifact manifest that carries doc and names
// the index as its subject, so registries list it as a referrer of the image.
func sbomArtifact(doc []byte, subject v1.Descriptor) (v1.Image, error) {
	blob := static.NewLayer(doc, sbomType)
	d, err := blob.Digest()
	if err != nil {
		return nil, err
	}
	cfg := []byte("{}")
	cd, cs, err := v1.SHA256(bytes.NewReader(cfg))
	if err != nil {
		return nil, err
	}
	m := v1.Manifest{
		SchemaVersion: 2, MediaType: types.OCIManifestSchema1, ArtifactType: sbomType,
		Config:  v1.Descriptor{MediaType: types.OCIEmptyJSON, Digest: cd, Size: cs, Data: cfg},
		Layers:  []v1.Descriptor{{MediaType: sbomType, Digest: d, Size: int64(len(doc))}},
		Subject: &v1.Descriptor{MediaType: subject.MediaType, Digest: subject.Digest, Size: subject.Size},
	}
	raw, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	return partial.CompressedToImage(artifact{raw: raw, cfg: cfg, blob: blob, digest: d})
}

// artifact is an OCI artifact manifest with one blob, as a v1.Image for
// layout and remote writers.
type artifact struct {
	raw, cfg []byte
	blob     v1.Layer
	digest   v1.Hash
}

func (a artifact) RawConfigFile() ([]byte, error)      { return a.cfg, nil }
func (a artifact) MediaType() (types.MediaType, error) { return types.OCIManifestSchema1, nil }
func (a artifact) RawManifest() ([]byte, error)        { return a.raw, nil }

func (a artifact) LayerByDigest(h v1.Hash) (partial.CompressedLayer, error) {
	if h != a.digest {
		return nil, fmt.Errorf("artifact has no blob %s", h)
	}
	return a.blob, nil
}

package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/pem"
	"errors"
	"io"
	"slices"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"golang.org/x/crypto/x509roots/fallback/bundle"
)

// The image's users, as distroless's static image has them: the CCM runs
// as nonroot (65532).
const (
	passwd = "root:x:0:0:root:/root:/sbin/nologin\n" +
		"nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n" +
		"nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n"
	group = "root:x:0:\nnobody:x:65534:\nnonroot:x:65532:\n"

	// caFile is where Go's crypto/x509 looks first on Linux, so no
	// SSL_CERT_FILE is needed.
	caFile = "etc/ssl/certs/ca-certificates.crt"
)

// entry is one file or directory of a layer.
type entry struct {
	name     string // without leading slash; directories end in "/"
	mode     int64
	uid, gid int
	data     []byte
	link     string // the target of a symbolic link
}

// baseLayer holds what every image shares: CA certificates, /etc/passwd and
// /etc/group, nonroot's home and /tmp.
func baseLayer(epoch time.Time) (v1.Layer, error) {
	ca, err := caBundle()
	if err != nil {
		return nil, err
	}
	return layer(epoch, []entry{
		{name: "etc/", mode: 0o755},
		{name: "etc/group", mode: 0o644, data: []byte(group)},
		{name: "etc/passwd", mode: 0o644, data: []byte(passwd)},
		{name: "etc/ssl/", mode: 0o755},
		{name: "etc/ssl/certs/", mode: 0o755},
		{name: caFile, mode: 0o644, data: ca},
		{name: "home/", mode: 0o755},
		{name: "home/nonroot/", mode: 0o700, uid: 65532, gid: 65532},
		{name: "tmp/", mode: 0o1777},
	})
}

// binaryLayer holds the CCM binary at /<name>.
func binaryLayer(epoch time.Time, name string, bin []byte) (v1.Layer, error) {
	return layer(epoch, []entry{{name: name, mode: 0o755, data: bin}})
}

// caBundle is the Mozilla (NSS) root store as PEM, from the pinned
// golang.org/x/crypto/x509roots/fallback module. Roots NSS trusts only with
// a constraint (distrust after a date) are left out: a PEM bundle cannot
// carry the constraint, and trusting them without it would trust more than
// NSS does.
func caBundle() ([]byte, error) {
	var b bytes.Buffer
	for r := range bundle.Roots() {
		if r.Constraint != nil {
			continue
		}
		if err := pem.Encode(&b, &pem.Block{Type: "CERTIFICATE", Bytes: r.Certificate}); err != nil {
			return nil, err
		}
	}
	if b.Len() == 0 {
		return nil, errors.New("the x509roots bundle has no roots")
	}
	return b.Bytes(), nil
}

// layer writes entries into a gzipped OCI layer, sorted by name, every
// timestamp epoch, so the same entries give the same digest.
func layer(epoch time.Time, entries []entry) (v1.Layer, error) {
	entries = slices.Clone(entries)
	slices.SortFunc(entries, func(a, b entry) int { return strings.Compare(a.name, b.name) })
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for _, e := range entries {
		h := &tar.Header{
			Name: e.name, Mode: e.mode, Uid: e.uid, Gid: e.gid, Size: int64(len(e.data)),
			ModTime: epoch, Format: tar.FormatPAX, Typeflag: tar.TypeReg,
		}
		switch {
		case e.name[len(e.name)-1] == '/':
			h.Typeflag = tar.TypeDir
		case e.link != "":
			h.Typeflag, h.Linkname = tar.TypeSymlink, e.link
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(e.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	raw := b.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(raw)), nil },
		tarball.WithMediaType(types.OCILayer), tarball.WithCompressionLevel(gzip.DefaultCompression),
		tarball.WithCompressedCaching)
}

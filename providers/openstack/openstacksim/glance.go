package openstacksim

import (
	"crypto/md5" //nolint:gosec // Glance's checksum is MD5 by definition
	"crypto/sha512"
	"encoding/hex"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// Image is a Glance image: the ones Nova's servers boot from. Its data is
// a few bytes the simulator makes up, so size and checksums are true.
type Image struct {
	// ID defaults to a generated one.
	ID   string `json:"id"`
	Name string `json:"name"`
	// DiskFormat defaults to qcow2, ContainerFormat to bare.
	DiskFormat      string `json:"disk_format,omitempty"`
	ContainerFormat string `json:"container_format,omitempty"`
	// Visibility is public (default), private, shared or community.
	Visibility string   `json:"visibility,omitempty"`
	MinDisk    int      `json:"min_disk,omitempty"`
	MinRAM     int      `json:"min_ram,omitempty"`
	Tags       []string `json:"tags,omitempty"`
	// Owner is the owning project's ID; "" means the project "admin" of
	// the Default domain, which uploads the public images in DevStack.
	Owner string `json:"owner,omitempty"`
	// Properties are the image's additional properties (hw_disk_bus, …),
	// shown as top-level attributes as Glance shows them.
	Properties map[string]string `json:"properties,omitempty"`
}

// Images are the images Glance starts with (DevStack's).
var Images = []Image{
	{ID: "00000000-0000-4000-8000-0000000000aa", Name: "cirros-0.6.2-x86_64-disk"},
}

// imageRec is a stored image with what Glance derives.
type imageRec struct {
	Image
	data    []byte
	created string
}

func (st *state) addImage(img Image) (Image, error) {
	img.Tags, img.Properties = slices.Clone(img.Tags), maps.Clone(img.Properties)
	if img.Name == "" {
		return Image{}, fmt.Errorf("image needs a name")
	}
	if img.ID == "" {
		img.ID = st.newID(kImage)
	}
	if _, dup := st.images.Get(img.ID); dup {
		return Image{}, fmt.Errorf("image %s exists", img.ID)
	}
	img.DiskFormat, img.ContainerFormat = cmpOr(img.DiskFormat, "qcow2"), cmpOr(img.ContainerFormat, "bare")
	img.Visibility = cmpOr(img.Visibility, "public")
	img.Owner = cmpOr(img.Owner, hexID("project", DefaultDomain, "admin"))
	switch img.Visibility {
	case "public", "private", "shared", "community":
	default:
		return Image{}, fmt.Errorf("image %s: visibility %q is not public, private, shared or community", img.Name, img.Visibility)
	}
	// Each image is a second newer than the one before, so Glance's
	// default order (newest first) is the reverse of insertion.
	created := time.Date(2024, 1, 1, 0, 0, st.images.Len(), 0, time.UTC).Format(time.RFC3339)
	st.images.Put(img.ID, &imageRec{
		Image: img, created: created,
		data: []byte("openstacksim image " + img.Name + "\n"),
	})

	return img, nil
}

// AddImage adds an image to Glance (for servers to reference by ID or
// name) and returns it as stored. It panics on a duplicate ID or a bad
// visibility: it is for test setup.
func (s *Server) AddImage(img Image) Image {
	s.mu.Lock()
	defer s.mu.Unlock()
	img, err := s.st.addImage(img)
	if err != nil {
		panic("openstacksim.AddImage: " + err.Error())
	}
	return img
}

// imageByRef resolves an image ID or name.
func (s *Server) imageByRef(ref string) (*imageRec, bool) {
	if img, ok := s.st.images.Get(ref); ok {
		return img, true
	}
	for _, img := range s.st.images.All() {
		if img.Name == ref {
			return img, true
		}
	}
	return nil, false
}

// visibleTo tells whether the project sees the image, as Glance's
// default policy decides.
func (img *imageRec) visibleTo(project string) bool {
	return img.Visibility == "public" || img.Visibility == "community" || img.Owner == project
}

func (s *Server) glanceRoutes() {
	for _, p := range []string{imagePrefix, imagePrefix + "/{$}"} {
		s.Handle("GET "+p, s.imageVersions(http.StatusMultipleChoices), simkit.NoAuth)
	}
	s.Handle("GET "+imagePrefix+"/versions", s.imageVersions(http.StatusOK), simkit.NoAuth)
	s.Handle("GET "+imageV2+"/images", s.listImages)
	s.Handle("GET "+imageV2+"/images/{id}", s.getImage)
	s.Handle("GET "+imageV2+"/images/{id}/file", s.downloadImage)
	s.Handle("GET "+imageV2+"/schemas/image", func(*http.Request) response { return jsonOK(imageSchema()) })
	s.Handle("GET "+imageV2+"/schemas/images", func(*http.Request) response { return jsonOK(imagesSchema()) })
}

// glanceMinors are the v2 minor versions Glance lists when it runs
// without the image cache and with a single store: 2.15 CURRENT, then
// 2.9 and 2.7 … 2.0.
var glanceMinors = []int{15, 9, 7, 6, 5, 4, 3, 2, 1, 0}

// imageVersions is Glance's version list: 300 Multiple Choices at the
// root, 200 at /versions. Every version links to /v2/, the base clients
// append resource paths to (Glance serves no document there).
func (s *Server) imageVersions(status int) simkit.HandlerFunc {
	return func(r *http.Request) response {
		href := simkit.BaseURL(r) + imageV2 + "/"
		out := []map[string]any{}
		for i, minor := range glanceMinors {
			st := "SUPPORTED"
			if i == 0 {
				st = "CURRENT"
			}
			out = append(out, map[string]any{"id": "v2." + strconv.Itoa(minor), "status": st, "links": []link{{Rel: "self", Href: href}}})
		}
		return simkit.JSON(status, map[string]any{"versions": out})
	}
}

func (s *Server) getImage(r *http.Request) response {
	img, ok := s.st.images.Get(r.PathValue("id"))
	if !ok || !img.visibleTo(s.tokenProject(r)) {
		return glanceError(http.StatusNotFound, "No image found with ID %s", r.PathValue("id"))
	}
	return jsonOK(imageJSON(img))
}

// downloadImage serves the image's data with its MD5 in Content-MD5, as
// Glance does.
func (s *Server) downloadImage(r *http.Request) response {
	img, ok := s.st.images.Get(r.PathValue("id"))
	if !ok || !img.visibleTo(s.tokenProject(r)) {
		return glanceError(http.StatusNotFound, "No image found with ID %s", r.PathValue("id"))
	}
	sum := md5.Sum(img.data) //nolint:gosec // Glance's checksum
	return response{Status: http.StatusOK, Body: simkit.Raw(img.data), Header: http.Header{
		"Content-Type":   {"application/octet-stream"},
		"Content-Md5":    {hex.EncodeToString(sum[:])},
		"Content-Length": {strconv.Itoa(len(img.data))},
	}}
}

// imageJSON is an image as GET /v2/images/{id} shows it: the core
// attributes, the links, and each additional property at the top level.
func imageJSON(img *imageRec) map[string]any {
	md5Sum := md5.Sum(img.data) //nolint:gosec // Glance's checksum
	shaSum := sha512.Sum512(img.data)
	out := map[string]any{}
	for k, v := range img.Properties {
		out[k] = v
	}
	for k, v := range map[string]any{
		"id": img.ID, "name": img.Name, "status": "active", "visibility": img.Visibility,
		"protected": false, "os_hidden": false, "owner": img.Owner, "tags": nonNil(img.Tags),
		"disk_format": img.DiskFormat, "container_format": img.ContainerFormat,
		"min_disk": img.MinDisk, "min_ram": img.MinRAM, "size": len(img.data), "virtual_size": len(img.data),
		"checksum": hex.EncodeToString(md5Sum[:]), "os_hash_algo": "sha512", "os_hash_value": hex.EncodeToString(shaSum[:]),
		"created_at": img.created, "updated_at": img.created,
		"self": "/v2/images/" + img.ID, "file": "/v2/images/" + img.ID + "/file", "schema": "/v2/schemas/image",
	} {
		out[k] = v
	}
	return out
}

// glanceErrorBody is Glance's error body (webob's JSON form).
func glanceErrorBody(status int, msg string) any {
	return map[string]any{"code": strconv.Itoa(status) + " " + http.StatusText(status), "title": http.StatusText(status), "message": msg}
}

func glanceError(status int, format string, args ...any) response {
	return simkit.JSON(status, glanceErrorBody(status, fmt.Sprintf(format, args...)))
}

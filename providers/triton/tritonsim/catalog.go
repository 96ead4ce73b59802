package tritonsim

import (
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// Package is an instance type, as GetPackage serves it (triton-go's
// compute.Package); Memory, Disk and Swap in MiB.
type Package struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Memory      int64  `json:"memory"`
	Disk        int64  `json:"disk"`
	Swap        int64  `json:"swap"`
	LWPs        int64  `json:"lwps"`
	VCPUs       int64  `json:"vcpus"`
	Version     string `json:"version"`
	Group       string `json:"group"`
	Description string `json:"description"`
	Default     bool   `json:"default"`
	Brand       string `json:"brand,omitempty"`
}

// Image is an image machines are created from, as GetImage serves it
// (triton-go's compute.Image).
type Image struct {
	ID           string            `json:"id"`
	Name         string            `json:"name"`
	OS           string            `json:"os"`
	Description  string            `json:"description"`
	Version      string            `json:"version"`
	Type         string            `json:"type"`
	Requirements map[string]any    `json:"requirements"`
	Homepage     string            `json:"homepage"`
	PublishedAt  time.Time         `json:"published_at"`
	Owner        string            `json:"owner"`
	Public       bool              `json:"public"`
	State        string            `json:"state"`
	Tags         map[string]string `json:"tags"`
}

// AddPackage adds a package and returns it; an empty ID is generated.
func (s *Server) AddPackage(p Package) Package {
	s.mu.Lock()
	defer s.mu.Unlock()
	return *s.st.addPackage(p)
}

func (st *state) addPackage(p Package) *Package {
	if p.ID == "" {
		p.ID = st.uuid("package")
	}
	if p.Version == "" {
		p.Version = "1.0.0"
	}
	st.packages.Put(p.ID, &p)
	return &p
}

// AddImage adds an image (public and active unless said otherwise) and
// returns it; an empty ID is generated.
func (s *Server) AddImage(img Image) Image {
	s.mu.Lock()
	defer s.mu.Unlock()
	return *s.st.addImage(img)
}

// DeleteImage deletes an image, as its owner (an operator retiring an
// old version) does; machines made from it keep running.
func (s *Server) DeleteImage(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.st.images.Del(id)
}

func (st *state) addImage(img Image) *Image {
	if img.ID == "" {
		img.ID = st.uuid("image")
	}
	if img.State == "" {
		img.State, img.Public = "active", true
	}
	if img.PublishedAt.IsZero() {
		img.PublishedAt = epoch
	}
	if img.Owner == "" {
		img.Owner = "00000000-0000-0000-0000-000000000000"
	}
	if img.Requirements == nil {
		img.Requirements = map[string]any{}
	}
	if img.Tags == nil {
		img.Tags = map[string]string{}
	}
	st.images.Put(img.ID, &img)
	return &img
}

// pkg finds a package by ID or name.
func (st *state) pkg(ref string) (*Package, bool) {
	if p, ok := st.packages.Get(ref); ok {
		return p, true
	}
	i := slices.IndexFunc(st.packages.All(), func(p *Package) bool { return p.Name == ref })
	if i < 0 {
		return nil, false
	}
	return st.packages.All()[i], true
}

// listPackages serves GET /{account}/packages with the filters triton-go
// sends (name, memory, disk, swap, lwps, vcpus, version, group, brand).
func (s *Server) listPackages(r *http.Request) simkit.Response {
	q := r.URL.Query()
	out := []Package{}
	for _, p := range s.st.packages.All() {
		fields := map[string]string{
			"name": p.Name, "memory": strconv.FormatInt(p.Memory, 10), "disk": strconv.FormatInt(p.Disk, 10),
			"swap": strconv.FormatInt(p.Swap, 10), "lwps": strconv.FormatInt(p.LWPs, 10),
			"vcpus": strconv.FormatInt(p.VCPUs, 10), "version": p.Version, "group": p.Group, "brand": p.Brand,
		}
		if matches(q, fields) {
			out = append(out, *p)
		}
	}
	return ok(out)
}

// matches reports whether every filter of q that fields names equals its
// field.
func matches(q map[string][]string, fields map[string]string) bool {
	for k, v := range fields {
		if want, set := q[k]; set && want[0] != v {
			return false
		}
	}
	return true
}

func (s *Server) getPackage(r *http.Request) simkit.Response {
	p, found := s.st.pkg(r.PathValue("id"))
	if !found {
		return notFound("package", r.PathValue("id"))
	}
	return ok(*p)
}

// listImages serves GET /{account}/images with the filters triton-go
// sends; without state, only active images, as CloudAPI lists them.
func (s *Server) listImages(r *http.Request) simkit.Response {
	q := r.URL.Query()
	if q.Get("state") == "" {
		q.Set("state", "active")
	}
	if q.Get("state") == "all" {
		q.Del("state")
	}
	out := []Image{}
	for _, img := range s.st.images.All() {
		fields := map[string]string{"name": img.Name, "os": img.OS, "version": img.Version,
			"public": strconv.FormatBool(img.Public), "state": img.State, "owner": img.Owner, "type": img.Type}
		if matches(q, fields) {
			out = append(out, *img)
		}
	}
	return ok(out)
}

func (s *Server) getImage(r *http.Request) simkit.Response {
	img, found := s.st.images.Get(r.PathValue("id"))
	if !found {
		return notFound("image", r.PathValue("id"))
	}
	return ok(*img)
}

// listDatacenters serves the bare map of datacenter names to their
// CloudAPI URLs, with the Triton-Datacenter-Name header.
func (s *Server) listDatacenters(r *http.Request) simkit.Response {
	resp := ok(map[string]string{s.opts.Datacenter: simkit.BaseURL(r)})
	resp.Header = http.Header{"Triton-Datacenter-Name": {s.opts.Datacenter}}
	return resp
}

// getDatacenter answers as CloudAPI does: 302 to the datacenter's
// CloudAPI, with a ResourceMoved body.
func (s *Server) getDatacenter(r *http.Request) simkit.Response {
	name := r.PathValue("name")
	if name != s.opts.Datacenter {
		return failCode(http.StatusNotFound, codeNotFound, "%s is not an available datacenter", name)
	}
	url := simkit.BaseURL(r)
	resp := failCode(http.StatusFound, codeMoved, "%s %s", name, url)
	resp.Header = http.Header{"Location": {url}}
	return resp
}

// listServices serves the map of service names to endpoints.
func (s *Server) listServices(r *http.Request) simkit.Response {
	return ok(map[string]string{
		"cloudapi": simkit.BaseURL(r),
		"cmon":     s.cmonEndpoint(),
	})
}

package dosim

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// Droplet statuses.
const (
	StatusNew     = "new"
	StatusActive  = "active"
	StatusOff     = "off"
	StatusArchive = "archive"
)

// DefaultSize is the size of droplets added without one.
const DefaultSize = "s-2vcpu-4gb"

// Droplet is a droplet as the API serves it (godo.Droplet's JSON).
type Droplet struct {
	ID        int      `json:"id"`
	Name      string   `json:"name"`
	Memory    int      `json:"memory"`
	Vcpus     int      `json:"vcpus"`
	Disk      int      `json:"disk"`
	Locked    bool     `json:"locked"`
	Status    string   `json:"status"`
	Created   string   `json:"created_at"`
	Features  []string `json:"features"`
	BackupIDs []int    `json:"backup_ids"`
	// SnapshotIDs are the droplet's snapshots (snapshot actions),
	// VolumeIDs the volumes attached to it.
	SnapshotIDs []int    `json:"snapshot_ids"`
	VolumeIDs   []string `json:"volume_ids"`
	Image       Image    `json:"image"`
	Size        Size     `json:"size"`
	SizeSlug    string   `json:"size_slug"`
	Networks    Networks `json:"networks"`
	Region      Region   `json:"region"`
	Tags        []string `json:"tags"`
	VPCUUID     string   `json:"vpc_uuid,omitempty"`
}

// Image is a droplet's image.
type Image struct {
	ID           int    `json:"id"`
	Name         string `json:"name"`
	Distribution string `json:"distribution"`
	Slug         string `json:"slug"`
	Public       bool   `json:"public"`
}

// Region is a region as the API serves it.
type Region struct {
	Slug      string   `json:"slug"`
	Name      string   `json:"name"`
	Sizes     []string `json:"sizes"`
	Available bool     `json:"available"`
	Features  []string `json:"features"`
}

// Networks are a droplet's addresses.
type Networks struct {
	V4 []NetworkV4 `json:"v4"`
	V6 []NetworkV6 `json:"v6"`
}

// NetworkV4 is an IPv4 address of a droplet; Type is "public" or
// "private". A private one has no gateway (openapi
// specification/resources/droplets/models/network_v4.yml).
type NetworkV4 struct {
	IPAddress string `json:"ip_address"`
	Netmask   string `json:"netmask"`
	Gateway   string `json:"gateway,omitempty"`
	Type      string `json:"type"`
}

// NetworkV6 is an IPv6 address of a droplet.
type NetworkV6 struct {
	IPAddress string `json:"ip_address"`
	Netmask   int    `json:"netmask"`
	Gateway   string `json:"gateway"`
	Type      string `json:"type"`
}

// regionNames are the regions the cloud knows.
var regionNames = map[string]string{
	"nyc1": "New York 1", "nyc2": "New York 2", "nyc3": "New York 3",
	"sfo2": "San Francisco 2", "sfo3": "San Francisco 3", "ams3": "Amsterdam 3",
	"sgp1": "Singapore 1", "lon1": "London 1", "fra1": "Frankfurt 1",
	"tor1": "Toronto 1", "blr1": "Bangalore 1", "syd1": "Sydney 1", "atl1": "Atlanta 1",
}

func region(slug string) Region {
	name := regionNames[slug]
	if name == "" {
		name = slug
	}
	return Region{Slug: slug, Name: name, Sizes: sizeSlugs(), Available: true,
		Features: []string{"backups", "ipv6", "metadata", "private_networking"}}
}

// regionSlugs are the regions' slugs, sorted.
func regionSlugs() []string {
	slugs := make([]string, 0, len(regionNames))
	for slug := range regionNames {
		slugs = append(slugs, slug)
	}
	slices.Sort(slugs)
	return slugs
}

// AddDroplet creates a droplet from d and returns it as stored. Zero
// fields get defaults: the next ID, status active, size DefaultSize (its
// memory, vcpus and disk those of the size slug, see GET /v2/sizes), the
// Options region, private and public IPv4 and public IPv6 addresses
// derived from the ID (see dropletNetworks), and a VPC. Tags are created.
func (s *Server) AddDroplet(d Droplet) Droplet {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.st
	if d.ID == 0 {
		d.ID = st.nextDroplet
	}
	st.nextDroplet = max(st.nextDroplet, d.ID+1)
	n := d.ID % 1_000_000
	if d.Name == "" {
		d.Name = fmt.Sprintf("droplet-%d", d.ID)
	}
	if d.Status == "" {
		d.Status = StatusActive
	}
	if d.SizeSlug == "" {
		d.SizeSlug = DefaultSize
	}
	if d.Size.Slug == "" {
		d.Size = dropletSize(d.SizeSlug)
	}
	d.Memory, d.Vcpus, d.Disk = d.Size.Memory, d.Size.Vcpus, d.Size.Disk
	if d.Region.Slug == "" {
		d.Region = region(s.opts.Region)
	}
	if d.Networks.V4 == nil && d.Networks.V6 == nil {
		d.Networks = dropletNetworks(n)
	}
	if d.Networks.V4 == nil {
		d.Networks.V4 = []NetworkV4{}
	}
	if d.Networks.V6 == nil {
		d.Networks.V6 = []NetworkV6{}
	}
	if d.VPCUUID == "" {
		d.VPCUUID = uuid(1, 1)
	}
	if d.Created == "" {
		d.Created = created
	}
	if d.Image.Slug == "" {
		d.Image = Image{ID: 1, Name: "24.04 (LTS) x64", Distribution: "Ubuntu", Slug: "ubuntu-24-04-x64", Public: true}
	}
	d.Tags = append([]string{}, d.Tags...)
	st.addTags(d.Tags)
	d.Features = dropletFeatures(d.Networks)
	d.BackupIDs, d.SnapshotIDs, d.VolumeIDs = []int{}, []int{}, []string{}
	if _, ok := st.droplets[d.ID]; !ok {
		st.dropletOrder = append(st.dropletOrder, d.ID)
	}
	st.droplets[d.ID] = &d
	return d.clone()
}

// dropletFeatures lists the network features the API reports for a
// droplet with these networks: "private_networking" with a private IPv4
// address, "ipv6" with an IPv6 one.
func dropletFeatures(n Networks) []string {
	features := []string{}
	if slices.ContainsFunc(n.V4, func(v NetworkV4) bool { return v.Type == "private" }) {
		features = append(features, "private_networking")
	}
	if len(n.V6) > 0 {
		features = append(features, "ipv6")
	}
	return features
}

func (d *Droplet) clone() Droplet {
	c := *d
	c.Tags = slices.Clone(d.Tags)
	c.SnapshotIDs, c.VolumeIDs = slices.Clone(d.SnapshotIDs), slices.Clone(d.VolumeIDs)
	c.Networks.V4 = slices.Clone(d.Networks.V4)
	c.Networks.V6 = slices.Clone(d.Networks.V6)
	return c
}

// DeleteDroplet removes a droplet and reports whether it existed.
func (s *Server) DeleteDroplet(id int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.removeDroplet(id)
}

// removeDroplet deletes a droplet, as DELETE /v2/droplets/{id} does: it
// leaves the firewalls it was assigned to, its volumes are detached (they
// outlive it) and its unfinished actions end errored. The caller holds
// s.mu.
func (s *Server) removeDroplet(id int) bool {
	st := s.st
	d, ok := st.droplets[id]
	if !ok {
		return false
	}
	s.detachAll(d)
	delete(st.droplets, id)
	st.dropletOrder = slices.DeleteFunc(st.dropletOrder, func(x int) bool { return x == id })
	for _, fw := range st.firewalls {
		fw.DropletIDs = slices.DeleteFunc(fw.DropletIDs, func(x int) bool { return x == id })
	}
	s.abortActions(id)
	return true
}

// deleteDropletAPI serves DELETE /v2/droplets/{id}: 204, then 404.
func (s *Server) deleteDropletAPI(r *http.Request) (int, any) {
	id, err := strconv.Atoi(r.PathValue("id"))
	if err != nil || !s.removeDroplet(id) {
		return notFound()
	}
	return http.StatusNoContent, nil
}

// deleteDropletsByTag serves DELETE /v2/droplets?tag_name=: every droplet
// with the tag, 204 (none is no error); without tag_name, 422.
func (s *Server) deleteDropletsByTag(r *http.Request) (int, any) {
	tag := r.URL.Query().Get("tag_name")
	if tag == "" {
		return unprocessable("tag_name is required")
	}
	for _, d := range s.st.dropletList() {
		if slices.Contains(d.Tags, tag) {
			s.removeDroplet(d.ID)
		}
	}
	return http.StatusNoContent, nil
}

// SetDropletStatus sets a droplet's status (e.g. StatusOff) and reports
// whether it exists.
func (s *Server) SetDropletStatus(id int, status string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, ok := s.st.droplets[id]
	if ok {
		d.Status = status
	}
	return ok
}

// Droplets returns the droplets, oldest first.
func (s *Server) Droplets() []Droplet {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st.dropletList()
}

func (st *state) dropletList() []Droplet {
	out := make([]Droplet, 0, len(st.dropletOrder))
	for _, id := range st.dropletOrder {
		out = append(out, st.droplets[id].clone())
	}
	return out
}

// listDroplets serves GET /v2/droplets with page, per_page, tag_name and
// name (exact, case-insensitive) filters.
func (s *Server) listDroplets(r *http.Request) (int, any) {
	q := r.URL.Query()
	tag, name := q.Get("tag_name"), q.Get("name")
	if tag != "" && name != "" {
		return unprocessable("tag_name and name cannot be combined")
	}
	var ds []*Droplet
	for _, id := range s.st.dropletOrder {
		d := s.st.droplets[id]
		if tag != "" && !slices.Contains(d.Tags, tag) {
			continue
		}
		if name != "" && !strings.EqualFold(d.Name, name) {
			continue
		}
		ds = append(ds, d)
	}
	return listClones(r, "droplets", ds, s.opts.PerPage, (*Droplet).clone)
}

func (s *Server) getDroplet(r *http.Request) (int, any) {
	id, err := strconv.Atoi(r.PathValue("id"))
	if err != nil {
		return notFound()
	}
	d, ok := s.st.droplets[id]
	if !ok {
		return notFound()
	}
	return http.StatusOK, map[string]any{"droplet": d.clone()}
}

func (s *Server) listRegions(r *http.Request) (int, any) {
	slugs := regionSlugs()
	rs := make([]Region, 0, len(slugs))
	for _, slug := range slugs {
		rs = append(rs, region(slug))
	}
	return list(r, "regions", rs, s.opts.PerPage)
}

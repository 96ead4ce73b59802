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
	// SnapshotIDs and VolumeIDs are always empty.
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

// Size is a droplet size.
type Size struct {
	Slug   string `json:"slug"`
	Memory int    `json:"memory"`
	Vcpus  int    `json:"vcpus"`
	Disk   int    `json:"disk"`
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

// NetworkV4 is an IPv4 address of a droplet; Type is "public" or "private".
type NetworkV4 struct {
	IPAddress string `json:"ip_address"`
	Netmask   string `json:"netmask"`
	Gateway   string `json:"gateway"`
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
	return Region{Slug: slug, Name: name, Sizes: []string{"s-1vcpu-1gb", DefaultSize}, Available: true,
		Features: []string{"backups", "ipv6", "metadata", "private_networking"}}
}

// AddDroplet creates a droplet from d and returns it as stored. Zero
// fields get defaults: the next ID, status active, size DefaultSize, the
// Options region, a private 10.x and a public 203.0.113.x-style IPv4 and a
// public IPv6 derived from the ID, and a VPC. Tags are created.
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
		d.Size = Size{Slug: d.SizeSlug, Memory: 4096, Vcpus: 2, Disk: 80}
	}
	d.Memory, d.Vcpus, d.Disk = d.Size.Memory, d.Size.Vcpus, d.Size.Disk
	if d.Region.Slug == "" {
		d.Region = region(s.opts.Region)
	}
	if d.Networks.V4 == nil && d.Networks.V6 == nil {
		d.Networks = Networks{
			V4: []NetworkV4{
				{IPAddress: fmt.Sprintf("10.%d.%d.%d", 10+n/65536%200, n/256%256, n%256), Netmask: "255.255.0.0", Gateway: "10.10.0.1", Type: "private"},
				{IPAddress: fmt.Sprintf("%d.%d.%d.%d", 100+n/65536%100, 64+n/256%64, n/256%256, n%256), Netmask: "255.255.240.0", Gateway: "104.131.0.1", Type: "public"},
			},
			V6: []NetworkV6{{IPAddress: fmt.Sprintf("2604:a880:800:10::%x:%x", n/65536, n%65536), Netmask: 64, Gateway: "2604:a880:800:10::1", Type: "public"}},
		}
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
	c.Networks.V4 = slices.Clone(d.Networks.V4)
	c.Networks.V6 = slices.Clone(d.Networks.V6)
	return c
}

// DeleteDroplet removes a droplet and reports whether it existed.
func (s *Server) DeleteDroplet(id int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.st.droplets[id]; !ok {
		return false
	}
	delete(s.st.droplets, id)
	s.st.dropletOrder = slices.DeleteFunc(s.st.dropletOrder, func(x int) bool { return x == id })
	return true
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
	var ds []Droplet
	for _, d := range s.st.dropletList() {
		if tag != "" && !slices.Contains(d.Tags, tag) {
			continue
		}
		if name != "" && !strings.EqualFold(d.Name, name) {
			continue
		}
		ds = append(ds, d)
	}
	return list(r, "droplets", ds, s.opts.PerPage)
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
	slugs := make([]string, 0, len(regionNames))
	for slug := range regionNames {
		slugs = append(slugs, slug)
	}
	slices.Sort(slugs)
	rs := make([]Region, 0, len(slugs))
	for _, slug := range slugs {
		rs = append(rs, region(slug))
	}
	return list(r, "regions", rs, s.opts.PerPage)
}

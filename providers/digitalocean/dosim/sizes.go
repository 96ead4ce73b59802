package dosim

import (
	"net/http"
	"slices"
)

// Size is a droplet size as the API serves it (godo.Size's JSON): in a
// droplet's "size" and in GET /v2/sizes.
type Size struct {
	Slug         string     `json:"slug"`
	Memory       int        `json:"memory"`
	Vcpus        int        `json:"vcpus"`
	Disk         int        `json:"disk"`
	PriceMonthly float64    `json:"price_monthly"`
	PriceHourly  float64    `json:"price_hourly"`
	Regions      []string   `json:"regions"`
	Available    bool       `json:"available"`
	Transfer     float64    `json:"transfer"`
	Description  string     `json:"description"`
	DiskInfo     []DiskInfo `json:"disk_info,omitempty"`
}

// DiskInfo is a disk of a size.
type DiskInfo struct {
	Type string       `json:"type"`
	Size DiskInfoSize `json:"size"`
}

// DiskInfoSize is how big a disk is.
type DiskInfoSize struct {
	Amount int    `json:"amount"`
	Unit   string `json:"unit"`
}

// sizeTable are the sizes the cloud offers, in the order GET /v2/sizes
// lists them: DigitalOcean's own slugs, memory (MiB), vCPUs, disk (GB),
// transfer (TB) and prices (USD), as its sizes list and pricing page give
// them (the Basic, General Purpose, CPU-Optimized and Memory-Optimized
// classes; openapi specification/resources/sizes/models/size.yml).
var sizeTable = []Size{
	basic("s-1vcpu-512mb-10gb", 512, 1, 10, 0.5, 4, 0.00595),
	basic("s-1vcpu-1gb", 1024, 1, 25, 1, 6, 0.00893),
	basic("s-1vcpu-2gb", 2048, 1, 50, 2, 12, 0.01786),
	basic("s-2vcpu-2gb", 2048, 2, 60, 3, 18, 0.02679),
	basic("s-2vcpu-4gb", 4096, 2, 80, 4, 24, 0.03571),
	basic("s-4vcpu-8gb", 8192, 4, 160, 5, 48, 0.07143),
	basic("s-8vcpu-16gb", 16384, 8, 320, 6, 96, 0.14286),
	sized("g-2vcpu-8gb", "General Purpose", 8192, 2, 25, 4, 63, 0.09375),
	sized("g-4vcpu-16gb", "General Purpose", 16384, 4, 50, 5, 126, 0.1875),
	sized("c-2", "CPU-Optimized", 4096, 2, 25, 4, 42, 0.0625),
	sized("c-4", "CPU-Optimized", 8192, 4, 50, 5, 84, 0.125),
	sized("m-2vcpu-16gb", "Memory-Optimized", 16384, 2, 50, 4, 84, 0.125),
}

func basic(slug string, memory, vcpus, disk int, transfer, monthly, hourly float64) Size {
	return sized(slug, "Basic", memory, vcpus, disk, transfer, monthly, hourly)
}

func sized(slug, class string, memory, vcpus, disk int, transfer, monthly, hourly float64) Size {
	return Size{
		Slug: slug, Memory: memory, Vcpus: vcpus, Disk: disk, Transfer: transfer,
		PriceMonthly: monthly, PriceHourly: hourly, Available: true, Description: class,
		DiskInfo: []DiskInfo{{Type: "local", Size: DiskInfoSize{Amount: disk, Unit: "gib"}}},
	}
}

// sizeSlugs are the slugs of sizeTable, in its order.
func sizeSlugs() []string {
	out := make([]string, len(sizeTable))
	for i, sz := range sizeTable {
		out[i] = sz.Slug
	}
	return out
}

// lookupSize returns the size called slug, offered in every region.
func lookupSize(slug string) (Size, bool) {
	i := slices.IndexFunc(sizeTable, func(sz Size) bool { return sz.Slug == slug })
	if i < 0 {
		return Size{}, false
	}
	sz := sizeTable[i]
	sz.Regions = regionSlugs()
	sz.DiskInfo = slices.Clone(sz.DiskInfo)
	return sz, true
}

// listSizes serves GET /v2/sizes, paginated.
func (s *Server) listSizes(r *http.Request) (int, any) {
	sizes := make([]Size, 0, len(sizeTable))
	for _, slug := range sizeSlugs() {
		sz, _ := lookupSize(slug)
		sizes = append(sizes, sz)
	}
	return list(r, "sizes", sizes, s.opts.PerPage)
}

// dropletSize is the size a droplet of slug reports: the table's, or for
// a slug the table lacks (only AddDroplet can make one) just the slug.
func dropletSize(slug string) Size {
	if sz, ok := lookupSize(slug); ok {
		return sz
	}
	return Size{Slug: slug, Available: true, Regions: regionSlugs()}
}

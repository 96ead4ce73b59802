package dosim

import (
	"strings"
	"testing"

	"github.com/digitalocean/godo"
)

// TestDropletSizeFromSlug: a droplet's memory, vcpus and disk, top level
// and in its size object, are those of its size slug, as GET /v2/sizes
// lists them (openapi specification/resources/sizes/models/size.yml and
// droplets/responses/examples.yml: s-1vcpu-1gb has 1024 MiB, 1 vCPU,
// 25 GB).
func TestDropletSizeFromSlug(t *testing.T) {
	s, c := setup(t, Options{})
	for slug, want := range map[string][3]int{
		"s-1vcpu-1gb": {1024, 1, 25},
		"s-1vcpu-2gb": {2048, 1, 50},
		"s-2vcpu-2gb": {2048, 2, 60},
		"s-2vcpu-4gb": {4096, 2, 80},
		"s-4vcpu-8gb": {8192, 4, 160},
	} {
		id := s.AddDroplet(Droplet{SizeSlug: slug}).ID
		d, _, err := c.Droplets.Get(ctx(), id)
		if err != nil {
			t.Fatal(err)
		}
		got := [3]int{d.Memory, d.Vcpus, d.Disk}
		inSize := [3]int{d.Size.Memory, d.Size.Vcpus, d.Size.Disk}
		if got != want || inSize != want || d.Size.Slug != slug || d.SizeSlug != slug || d.Size.PriceMonthly == 0 || len(d.Size.Regions) == 0 {
			t.Errorf("%s: memory/vcpus/disk %v, size %+v; want %v", slug, got, d.Size, want)
		}
	}
}

// TestSizesList: GET /v2/sizes is paginated with links and meta like every
// list, and every region offers the sizes listed.
func TestSizesList(t *testing.T) {
	_, c := setup(t, Options{})
	var all []godo.Size
	opt := &godo.ListOptions{Page: 1, PerPage: 5}
	for {
		sizes, resp, err := c.Sizes.List(ctx(), opt)
		if err != nil {
			t.Fatal(err)
		}
		if resp.Meta == nil || resp.Meta.Total != len(sizeTable) {
			t.Fatalf("meta = %+v", resp.Meta)
		}
		all = append(all, sizes...)
		if resp.Links == nil || resp.Links.IsLastPage() {
			break
		}
		page, err := resp.Links.CurrentPage()
		if err != nil {
			t.Fatal(err)
		}
		opt.Page = page + 1
	}
	if len(all) != len(sizeTable) {
		t.Fatalf("walked %d sizes, want %d", len(all), len(sizeTable))
	}
	for _, sz := range all {
		if sz.Memory == 0 || sz.Vcpus == 0 || sz.Disk == 0 || sz.PriceHourly == 0 || sz.PriceMonthly == 0 || sz.Transfer == 0 ||
			!sz.Available || sz.Description == "" || len(sz.Regions) != len(regionNames) || !strings.Contains(sz.Slug, "-") {
			t.Errorf("size %+v", sz)
		}
	}
	regions, _, err := c.Regions.List(ctx(), &godo.ListOptions{PerPage: 200})
	if err != nil || len(regions) == 0 || len(regions[0].Sizes) != len(sizeTable) {
		t.Errorf("region sizes: %+v %v", regions, err)
	}
}

package dosim

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/digitalocean/godo"
)

func TestDropletPagination(t *testing.T) {
	s, c := setup(t, Options{})
	for i := range 450 {
		s.AddDroplet(Droplet{Name: fmt.Sprintf("node-%03d", i)})
	}
	// The DO CCM's allDropletList loop.
	opt := &godo.ListOptions{Page: 1, PerPage: 200}
	seen := map[int]bool{}
	pages := 0
	for {
		ds, resp, err := c.Droplets.List(ctx(), opt)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, d := range ds {
			seen[d.ID] = true
		}
		if resp.Meta == nil || resp.Meta.Total != 450 {
			t.Fatalf("meta = %+v", resp.Meta)
		}
		if pages > 1 && (resp.Links.Pages.Prev == "" || resp.Links.Pages.First == "") {
			t.Errorf("page %d links = %+v, want first and prev", pages, resp.Links.Pages)
		}
		if resp.Links == nil || resp.Links.IsLastPage() {
			break
		}
		if !strings.HasPrefix(resp.Links.Pages.Next, s.URL()+"/v2/droplets?") {
			t.Errorf("next = %q, want an absolute URL to the server", resp.Links.Pages.Next)
		}
		cur, err := resp.Links.CurrentPage()
		if err != nil {
			t.Fatal(err)
		}
		if cur != pages {
			t.Fatalf("CurrentPage = %d on page %d", cur, pages)
		}
		opt.Page = cur + 1
		if pages > 10 {
			t.Fatal("pagination does not end")
		}
	}
	if pages != 3 || len(seen) != 450 {
		t.Errorf("walked %d pages, %d droplets; want 3 and 450", pages, len(seen))
	}
	if got := s.Stats()["GET /v2/droplets"]; got != 3 {
		t.Errorf("list calls = %d", got)
	}

	// Defaults and limits.
	ds, resp, err := c.Droplets.List(ctx(), nil)
	if err != nil || len(ds) != DefaultPerPage || !strings.Contains(resp.Links.Pages.Last, "page=23") {
		t.Errorf("default page: %d droplets, links %+v, err %v", len(ds), resp.Links, err)
	}
	ds, _, err = c.Droplets.List(ctx(), &godo.ListOptions{PerPage: 1000})
	if err != nil || len(ds) != MaxPerPage {
		t.Errorf("per_page=1000 gave %d droplets, err %v", len(ds), err)
	}
	ds, resp, err = c.Droplets.List(ctx(), &godo.ListOptions{Page: 99, PerPage: 200})
	if err != nil || len(ds) != 0 || resp.Meta.Total != 450 {
		t.Errorf("page past the end: %d droplets, err %v", len(ds), err)
	}
}

func TestDropletGet(t *testing.T) {
	s, c := setup(t, Options{})
	id := s.AddDroplet(Droplet{Name: "web-1", Tags: []string{"k8s"}}).ID
	d, _, err := c.Droplets.Get(ctx(), id)
	if err != nil {
		t.Fatal(err)
	}
	priv, _ := d.PrivateIPv4()
	pub, _ := d.PublicIPv4()
	pub6, _ := d.PublicIPv6()
	if d.Name != "web-1" || d.Status != "active" || d.SizeSlug != DefaultSize || d.Size.Slug != DefaultSize ||
		d.Region.Slug != "nyc3" || priv == "" || pub == "" || pub6 == "" || d.VPCUUID == "" || d.Created == "" ||
		len(d.Tags) != 1 || d.VolumeIDs == nil {
		t.Errorf("droplet = %+v", d)
	}

	_, _, err = c.Droplets.Get(ctx(), 42)
	er := errorResponse(t, err, http.StatusNotFound)
	if er.Message != msgNotFound || er.RequestID == "" {
		t.Errorf("404 = %+v", er)
	}

	s.SetDropletStatus(id, StatusOff)
	if d, _, _ = c.Droplets.Get(ctx(), id); d.Status != StatusOff {
		t.Errorf("status = %q, want off", d.Status)
	}
	s.DeleteDroplet(id)
	_, _, err = c.Droplets.Get(ctx(), id)
	wantStatus(t, err, http.StatusNotFound)
}

func TestDropletFilters(t *testing.T) {
	s, c := setup(t, Options{})
	for i := range 30 {
		var tags []string
		if i%3 == 0 {
			tags = []string{"k8s:cluster"}
		}
		s.AddDroplet(Droplet{Name: fmt.Sprintf("Node-%d", i), Tags: tags})
	}
	ds, resp, err := c.Droplets.ListByTag(ctx(), "k8s:cluster", &godo.ListOptions{PerPage: 4})
	if err != nil || len(ds) != 4 || resp.Meta.Total != 10 || !strings.Contains(resp.Links.Pages.Next, "tag_name=k8s%3Acluster") {
		t.Errorf("by tag: %d droplets, meta %+v, links %+v, err %v", len(ds), resp.Meta, resp.Links, err)
	}
	ds, _, err = c.Droplets.ListByName(ctx(), "node-7", nil)
	if err != nil || len(ds) != 1 || ds[0].Name != "Node-7" {
		t.Errorf("by name: %+v, err %v", ds, err)
	}
	regions, _, err := c.Regions.List(ctx(), nil)
	if err != nil || len(regions) == 0 {
		t.Errorf("regions: %v, %v", regions, err)
	}
}

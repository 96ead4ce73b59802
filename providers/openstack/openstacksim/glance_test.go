package openstacksim

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"io"
	"net/http"
	"slices"
	"testing"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/gophercloud/gophercloud/v2/openstack/image/v2/imagedata"
	"github.com/gophercloud/gophercloud/v2/openstack/image/v2/images"
	"github.com/gophercloud/gophercloud/v2/pagination"
)

func imageClient(t *testing.T, c clients, s *Server) *gophercloud.ServiceClient {
	t.Helper()
	img, err := openstack.NewImageV2(c.provider, gophercloud.EndpointOpts{Region: s.Region()})
	if err != nil {
		t.Fatalf("NewImageV2: %v", err)
	}
	return img
}

func TestImagesListPagesAndServersReferenceThem(t *testing.T) {
	s, c := setup(t, Options{})
	glance := imageClient(t, c, s)
	ubuntu := s.AddImage(Image{Name: "ubuntu-24.04", DiskFormat: "raw", Properties: map[string]string{"os_distro": "ubuntu"}})
	own := s.AddImage(Image{Name: "snapshot", Visibility: "private", Owner: s.opts.Users[0].ProjectID})
	s.AddImage(Image{Name: "someone-elses", Visibility: "private"})
	v := s.AddServer(NovaServer{Name: "node-1", Image: "ubuntu-24.04"})

	// Pages of one, newest first: Glance's relative next links are
	// followed by gophercloud's pager; another project's private image
	// is not listed.
	var names []string
	pages := 0
	err := images.List(glance, images.ListOpts{Limit: 1}).EachPage(ctx(), func(_ context.Context, p pagination.Page) (bool, error) {
		pages++
		list, err := images.ExtractImages(p)
		for _, img := range list {
			names = append(names, img.Name)
		}
		return true, err
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"snapshot", "ubuntu-24.04", "cirros-0.6.2-x86_64-disk"}; !slices.Equal(names, want) || pages != 3 {
		t.Errorf("images = %v in %d pages, want %v in 3", names, pages, want)
	}
	if n := s.Stats()["GET /image/v2/images"]; n != 4 {
		t.Errorf("list requests = %d, want 4: a full last page links to an empty one", n)
	}

	got, err := images.Get(ctx(), glance, ubuntu.ID).Extract()
	if err != nil {
		t.Fatal(err)
	}
	if got.Name != "ubuntu-24.04" || got.DiskFormat != "raw" || got.Status != images.ImageStatusActive || got.Properties["os_distro"] != "ubuntu" {
		t.Errorf("image = %+v", got)
	}
	rd, err := imagedata.Download(ctx(), glance, ubuntu.ID).Extract()
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(rd)
	_ = rd.Close()
	if sum := md5.Sum(data); hex.EncodeToString(sum[:]) != got.Checksum || int64(len(data)) != got.SizeBytes {
		t.Errorf("data %q does not match checksum %s and size %d", data, got.Checksum, got.SizeBytes)
	}
	if _, err := images.Get(ctx(), glance, own.ID).Extract(); err != nil {
		t.Errorf("own private image: %v", err)
	}
	_, err = images.Get(ctx(), glance, "missing").Extract()
	wantCode(t, err, http.StatusNotFound)

	// Filters: by name, by property, "in:" lists.
	for q, want := range map[string]int{"name=ubuntu-24.04": 1, "os_distro=ubuntu": 1, "name=in:snapshot,ubuntu-24.04": 2, "visibility=private": 1, "visibility=community": 0} {
		status, body := rawClient{t: t, token: c.provider.TokenID}.do("GET", s.URL()+"/image/v2/images?"+q, nil)
		if list, _ := path(body, "images").([]any); status != http.StatusOK || len(list) != want {
			t.Errorf("images?%s: %d, %d images, want %d", q, status, len(list), want)
		}
	}

	// The server's image is that image, as Nova shows it.
	sv, err := servers.Get(ctx(), c.compute, v.ID).Extract()
	if err != nil || sv.Image["id"] != ubuntu.ID {
		t.Errorf("server image = %v, %v; want %s", sv.Image, err, ubuntu.ID)
	}
}

func TestImageListErrors(t *testing.T) {
	s, c := setup(t, Options{})
	raw := rawClient{t: t, token: c.provider.TokenID}
	for q, want := range map[string]int{
		"limit=x": http.StatusBadRequest, "limit=-1": http.StatusBadRequest, "marker=missing": http.StatusBadRequest,
		"sort_key=nope": http.StatusBadRequest, "sort_dir=sideways&sort_key=name": http.StatusBadRequest,
		"sort=name:asc,size": http.StatusOK, "sort=name&sort_key=name": http.StatusBadRequest,
	} {
		if status, body := raw.do("GET", s.URL()+"/image/v2/images?"+q, nil); status != want {
			t.Errorf("images?%s: %d %v, want %d", q, status, body, want)
		}
	}
	if status, _ := (rawClient{t: t}).do("GET", s.URL()+"/image/v2/images", nil); status != http.StatusUnauthorized {
		t.Errorf("images without a token: %d, want 401", status)
	}
	status, body := raw.do("GET", s.URL()+"/image", nil)
	if status != http.StatusMultipleChoices || path(body, "versions", 0, "status") != "CURRENT" {
		t.Errorf("GET /image: %d %v", status, body)
	}
	if status, _ := raw.do("GET", s.URL()+"/image/versions", nil); status != http.StatusOK {
		t.Errorf("GET /image/versions: %d", status)
	}
}

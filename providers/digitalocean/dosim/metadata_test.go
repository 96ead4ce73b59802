package dosim

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
)

// get returns the status and body of GET url.
func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestMetadataService: each droplet's metadata service, without auth,
// served at a listener's root (MetadataHandler) and under
// /_sim/metadata/<droplet>/ on the Server: /metadata/v1.json with the
// fields go-metadata's Metadata decodes (csi-digitalocean's node plugin
// reads droplet_id and region from it), /metadata/v1/id, region and the
// rest as text, indexes that 301 to their trailing slash
// (docs.digitalocean.com/reference/api/metadata/droplet-properties).
func TestMetadataService(t *testing.T) {
	s := NewServer(t, Options{})
	d := s.AddDroplet(Droplet{Name: "node-1", Region: region("sfo3"), Tags: []string{"k8s", "web"}})
	other := s.AddDroplet(Droplet{Name: "node-2"})
	md := httptest.NewServer(s.MetadataHandler(d.ID))
	t.Cleanup(md.Close)

	resp, err := http.Get(md.URL + "/metadata/v1.json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var all struct { // go-metadata's Metadata, abridged
		DropletID  int    `json:"droplet_id"`
		Hostname   string `json:"hostname"`
		Region     string `json:"region"`
		Interfaces map[string][]struct {
			MAC  string `json:"mac"`
			IPv4 *struct {
				IPAddress string `json:"ip_address"`
			} `json:"ipv4"`
		} `json:"interfaces"`
		DNS struct {
			Nameservers []string `json:"nameservers"`
		} `json:"dns"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&all); err != nil {
		t.Fatal(err)
	}
	pub, _ := publicIPv4(d)
	if all.DropletID != d.ID || all.Hostname != "node-1" || all.Region != "sfo3" || len(all.Interfaces["public"]) != 1 ||
		all.Interfaces["public"][0].IPv4.IPAddress != pub || all.Interfaces["private"][0].MAC == "" || len(all.DNS.Nameservers) == 0 {
		t.Errorf("v1.json: %+v", all)
	}

	for path, want := range map[string]string{
		"/metadata/v1/id":                               strconv.Itoa(d.ID),
		"/metadata/v1/region":                           "sfo3",
		"/metadata/v1/hostname":                         "node-1",
		"/metadata/v1/interfaces/public/0/ipv4/address": pub,
		"/metadata/v1/tags/":                            "k8s\nweb",
		"/metadata/v1/tags":                             "k8s\nweb", // 301 to tags/, followed
		"/metadata/v1/interfaces/":                      "public/\nprivate/",
	} {
		if status, body := get(t, md.URL+path); status != http.StatusOK || body != want {
			t.Errorf("%s: %d %q, want %q", path, status, body, want)
		}
	}
	if status, body := get(t, md.URL+"/metadata/v1"); status != http.StatusOK || body[:3] != "id\n" {
		t.Errorf("index: %d %q", status, body)
	}
	for _, path := range []string{"/metadata/v1/nope", "/metadata/v1/id/", "/metadata/v2/id", "/"} {
		if status, _ := get(t, md.URL+path); status != http.StatusNotFound {
			t.Errorf("%s: %d, want 404", path, status)
		}
	}

	// On the Server, as another droplet, without a token; the redirect
	// keeps the prefix.
	base := s.URL() + "/_sim/metadata/" + strconv.Itoa(other.ID)
	if status, body := get(t, base+"/metadata/v1/id"); status != http.StatusOK || body != strconv.Itoa(other.ID) {
		t.Errorf("/_sim/metadata id: %d %q", status, body)
	}
	if status, body := get(t, base+"/metadata/v1/interfaces"); status != http.StatusOK || body != "public/\nprivate/" {
		t.Errorf("/_sim/metadata interfaces: %d %q", status, body)
	}
	if n := s.Stats()["GET /v2/droplets"]; n != 0 || len(s.Requests()) != 0 {
		t.Errorf("metadata requests logged: %v", s.Requests())
	}

	s.DeleteDroplet(d.ID)
	if status, _ := get(t, md.URL+"/metadata/v1/id"); status != http.StatusNotFound {
		t.Errorf("deleted droplet's metadata: %d", status)
	}
}

func publicIPv4(d Droplet) (string, bool) {
	for _, n := range d.Networks.V4 {
		if n.Type == "public" {
			return n.IPAddress, true
		}
	}
	return "", false
}

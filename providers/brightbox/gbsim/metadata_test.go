package gbsim

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

func getText(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url) //nolint:noctx // a test's GET
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(body)
}

// TestMetadata: each server's EC2-style metadata, on the simulator's URL
// under /_sim/metadata/<server>/ and from MetadataHandler, unauthenticated
// and not counted as API requests.
func TestMetadata(t *testing.T) {
	s := NewServer(t, Options{})
	srv := s.AddServer(CloudServer{Name: "a", Zone: "gb1-b"})
	own := httptest.NewServer(s.MetadataHandler(srv.ID))
	t.Cleanup(own.Close)
	for _, base := range []string{s.URL() + "/_sim/metadata/" + srv.ID, own.URL} {
		for path, want := range map[string]string{
			"/latest/meta-data/instance-id":                 srv.ID,
			"/latest/meta-data/placement/availability-zone": "gb1-b",
			"/latest/meta-data/hostname":                    srv.FQDN,
			"/latest/meta-data/local-ipv4":                  srv.IPv4,
			"/latest/meta-data/":                            "hostname\ninstance-id\nlocal-hostname\nlocal-ipv4\nplacement/",
			"/latest/meta-data/placement/":                  "availability-zone",
		} {
			if status, body := getText(t, base+path); status != http.StatusOK || body != want {
				t.Errorf("%s%s: %d %q, want %q", base, path, status, body, want)
			}
		}
		for _, path := range []string{"/latest/meta-data/nope", "/latest/user-data", "/latest/meta-data/instance-id/"} {
			if status, _ := getText(t, base+path); status != http.StatusNotFound {
				t.Errorf("%s%s: %d, want 404", base, path, status)
			}
		}
	}
	if status, _ := getText(t, s.URL()+"/_sim/metadata/srv-nope0/latest/meta-data/instance-id"); status != http.StatusNotFound {
		t.Errorf("a server that does not exist: %d, want 404", status)
	}
	s.DeleteServer(srv.ID)
	if status, _ := getText(t, own.URL+"/latest/meta-data/instance-id"); status != http.StatusNotFound {
		t.Errorf("a deleted server: %d, want 404", status)
	}
	if n := len(s.Requests()); n != 0 {
		t.Errorf("%d API requests logged, want none", n)
	}
}

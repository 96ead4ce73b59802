package providerid

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var (
	digitalocean = Codec{Scheme: "digitalocean"}
	openstack    = Codec{Scheme: "openstack", TripleSlash: true}
	brightbox    = Codec{Scheme: "brightbox"}
	triton       = Codec{Scheme: "triton", Legacy: []string{"joyent"}}
	rancher      = Codec{Scheme: "rancher"}
)

func TestFormat(t *testing.T) {
	tests := []struct {
		name  string
		codec Codec
		id    string
		want  string
	}{
		{"digitalocean", digitalocean, "123", "digitalocean://123"},
		{"openstack triple slash", openstack, "8c8f5a6e-0c4a-4e55-9a48-2b3b6f3d6a1e", "openstack:///8c8f5a6e-0c4a-4e55-9a48-2b3b6f3d6a1e"},
		{"brightbox", brightbox, "srv-abc12", "brightbox://srv-abc12"},
		{"triton uses current scheme", triton, "f4b1c6a2-77a1-4c57-9d7e-0e0d5d8c2b9a", "triton://f4b1c6a2-77a1-4c57-9d7e-0e0d5d8c2b9a"},
		{"rancher", rancher, "1h5", "rancher://1h5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.codec.Format(tt.id); got != tt.want {
				t.Errorf("Format(%q) = %q, want %q", tt.id, got, tt.want)
			}
		})
	}
}

func TestParse(t *testing.T) {
	tests := []struct {
		name       string
		codec      Codec
		providerID string
		want       ID
		wantErr    error
		errHas     []string // substrings the error message must contain
	}{
		// Historic formats of every cloud.
		{name: "digitalocean", codec: digitalocean, providerID: "digitalocean://123",
			want: ID{Scheme: "digitalocean", Value: "123"}},
		{name: "openstack triple slash", codec: openstack, providerID: "openstack:///8c8f5a6e-0c4a-4e55-9a48-2b3b6f3d6a1e",
			want: ID{Scheme: "openstack", Value: "8c8f5a6e-0c4a-4e55-9a48-2b3b6f3d6a1e"}},
		{name: "openstack regional", codec: openstack, providerID: "openstack://RegionOne/8c8f5a6e-0c4a-4e55-9a48-2b3b6f3d6a1e",
			want: ID{Scheme: "openstack", Region: "RegionOne", Value: "8c8f5a6e-0c4a-4e55-9a48-2b3b6f3d6a1e"}},
		{name: "openstack double slash", codec: openstack, providerID: "openstack://8c8f5a6e",
			want: ID{Scheme: "openstack", Value: "8c8f5a6e"}},
		{name: "brightbox", codec: brightbox, providerID: "brightbox://srv-abc12",
			want: ID{Scheme: "brightbox", Value: "srv-abc12"}},
		{name: "triton", codec: triton, providerID: "triton://f4b1c6a2-77a1-4c57-9d7e-0e0d5d8c2b9a",
			want: ID{Scheme: "triton", Value: "f4b1c6a2-77a1-4c57-9d7e-0e0d5d8c2b9a"}},
		{name: "triton legacy joyent", codec: triton, providerID: "joyent://f4b1c6a2-77a1-4c57-9d7e-0e0d5d8c2b9a",
			want: ID{Scheme: "joyent", Value: "f4b1c6a2-77a1-4c57-9d7e-0e0d5d8c2b9a"}},
		{name: "rancher", codec: rancher, providerID: "rancher://1h5",
			want: ID{Scheme: "rancher", Value: "1h5"}},
		{name: "digitalocean triple slash", codec: digitalocean, providerID: "digitalocean:///123",
			want: ID{Scheme: "digitalocean", Value: "123"}},

		// Normalisation.
		{name: "scheme is case-insensitive", codec: digitalocean, providerID: "DigitalOcean://123",
			want: ID{Scheme: "DigitalOcean", Value: "123"}},
		{name: "legacy scheme is case-insensitive", codec: triton, providerID: "JOYENT://abc",
			want: ID{Scheme: "JOYENT", Value: "abc"}},
		{name: "ID is case-sensitive", codec: brightbox, providerID: "brightbox://SRV-Abc12",
			want: ID{Scheme: "brightbox", Value: "SRV-Abc12"}},
		{name: "surrounding whitespace", codec: digitalocean, providerID: " \tdigitalocean://123\n",
			want: ID{Scheme: "digitalocean", Value: "123"}},

		// Malformed.
		{name: "empty", codec: digitalocean, providerID: "", wantErr: ErrMalformed},
		{name: "blank", codec: digitalocean, providerID: "   ", wantErr: ErrMalformed},
		{name: "no separator", codec: digitalocean, providerID: "123", wantErr: ErrMalformed,
			errHas: []string{`"123"`, "digitalocean://<id>"}},
		{name: "single slash", codec: digitalocean, providerID: "digitalocean:/123", wantErr: ErrMalformed},
		{name: "empty scheme", codec: digitalocean, providerID: "://123", wantErr: ErrMalformed},
		{name: "empty ID", codec: digitalocean, providerID: "digitalocean://", wantErr: ErrMalformed,
			errHas: []string{"empty instance ID"}},
		{name: "empty ID triple slash", codec: openstack, providerID: "openstack:///", wantErr: ErrMalformed},
		{name: "empty ID after region", codec: openstack, providerID: "openstack://RegionOne/", wantErr: ErrMalformed},
		{name: "region in triple slash form", codec: openstack, providerID: "openstack:///RegionOne/abc", wantErr: ErrMalformed},
		{name: "four slashes", codec: openstack, providerID: "openstack:////abc", wantErr: ErrMalformed},
		{name: "path beyond region", codec: openstack, providerID: "openstack://RegionOne/abc/def", wantErr: ErrMalformed},
		{name: "kind style path", codec: Codec{Scheme: "kind"}, providerID: "kind://cluster/kind/node", wantErr: ErrMalformed},

		// Other clouds.
		{name: "other cloud", codec: digitalocean, providerID: "aws:///us-east-1a/i-0abc", wantErr: ErrWrongScheme,
			errHas: []string{`"aws"`, `"digitalocean"`}},
		{name: "other cloud lists legacy schemes", codec: triton, providerID: "brightbox://srv-abc12", wantErr: ErrWrongScheme,
			errHas: []string{`"brightbox"`, `"triton"`, `"joyent"`}},
		{name: "scheme prefix is not enough", codec: digitalocean, providerID: "digitaloceanx://123", wantErr: ErrWrongScheme},

		// Regions.
		{name: "our region", codec: Codec{Scheme: "openstack", TripleSlash: true, Region: "RegionOne"}, providerID: "openstack://RegionOne/abc",
			want: ID{Scheme: "openstack", Region: "RegionOne", Value: "abc"}},
		{name: "another region", codec: Codec{Scheme: "openstack", TripleSlash: true, Region: "RegionOne"}, providerID: "openstack://RegionTwo/abc",
			wantErr: ErrOtherRegion, errHas: []string{`"RegionTwo"`, `"RegionOne"`}},
		{name: "no region in the providerID", codec: Codec{Scheme: "openstack", TripleSlash: true, Region: "RegionOne"}, providerID: "openstack:///abc",
			want: ID{Scheme: "openstack", Value: "abc"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.codec.Parse(tt.providerID)
			if !errors.Is(err, tt.wantErr) || (err == nil) != (tt.wantErr == nil) {
				t.Fatalf("Parse(%q) error = %v, want %v", tt.providerID, err, tt.wantErr)
			}
			for _, s := range tt.errHas {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("Parse(%q) error %q does not contain %s", tt.providerID, err, s)
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Parse(%q) mismatch (-want +got):\n%s", tt.providerID, diff)
			}
		})
	}
}

// TestParseAcceptsFormat checks that every cloud's canonical output is
// byte-compatible with what its existing CCM wrote, and parses back.
func TestParseAcceptsFormat(t *testing.T) {
	for _, c := range []Codec{digitalocean, openstack, brightbox, triton, rancher} {
		t.Run(c.Scheme, func(t *testing.T) {
			got, err := c.Parse(c.Format("abc-123"))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(ID{Scheme: c.Scheme, Value: "abc-123"}, got); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// FuzzRoundTrip checks Parse(Format(id)).Value == id for every non-empty id
// without "/" and without surrounding whitespace, which Parse trims.
func FuzzRoundTrip(f *testing.F) {
	for _, id := range []string{"123", "srv-abc12", "8c8f5a6e-0c4a-4e55-9a48-2b3b6f3d6a1e", "a:b", "ÄÖ", "a b", "::"} {
		f.Add(id, false)
		f.Add(id, true)
	}
	f.Fuzz(func(t *testing.T, id string, tripleSlash bool) {
		if id == "" || strings.Contains(id, "/") || strings.TrimSpace(id) != id {
			t.Skip()
		}
		c := Codec{Scheme: "cloud", TripleSlash: tripleSlash, Legacy: []string{"oldcloud"}}
		got, err := c.Parse(c.Format(id))
		if err != nil {
			t.Fatalf("Parse(Format(%q)) error: %v", id, err)
		}
		if diff := cmp.Diff(ID{Scheme: "cloud", Value: id}, got); diff != "" {
			t.Errorf("Parse(Format(%q)) mismatch (-want +got):\n%s", id, diff)
		}
	})
}

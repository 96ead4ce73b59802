package framework

import (
	"errors"
	"strings"
	"testing"
)

func TestPickByName(t *testing.T) {
	id := func(s string) string { return s }
	for _, tt := range []struct {
		desc      string
		found     []string
		malformed int
		want      string
		notFound  bool
		wantErr   string
	}{
		{desc: "one match", found: []string{"vm-1"}, malformed: 3, want: "vm-1"},
		{desc: "none", notFound: true, wantErr: `no droplet named "web-1"`},
		{desc: "none, but malformed entries", malformed: 2, wantErr: `no droplet named "web-1", but the list held 2 malformed droplet(s)`},
		{desc: "two", found: []string{"vm-1", "vm-2"}, wantErr: `droplets vm-1 and vm-2 both match node "web-1"`},
	} {
		t.Run(tt.desc, func(t *testing.T) {
			got, err := PickByName("droplet", "web-1", tt.found, tt.malformed, id)
			if got != tt.want {
				t.Errorf("PickByName = %q, want %q", got, tt.want)
			}
			if IsNotFound(err) != tt.notFound || errors.Is(err, ErrNotFound) != tt.notFound {
				t.Errorf("not-found = %v, want %v (err %v)", IsNotFound(err), tt.notFound, err)
			}
			if (err == nil) != (tt.wantErr == "") || err != nil && !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("err = %v, want one holding %q", err, tt.wantErr)
			}
		})
	}
}

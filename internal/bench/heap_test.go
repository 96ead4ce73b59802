package main

import (
	"bytes"
	"runtime"
	"runtime/pprof"
	"testing"

	"github.com/google/pprof/profile"
)

func stack(funcs ...string) []*profile.Location {
	out := make([]*profile.Location, len(funcs))
	for i, f := range funcs {
		out[i] = &profile.Location{Line: []profile.Line{{Function: &profile.Function{Name: f}}}}
	}
	return out
}

// TestAttribute: memory is put down to the innermost ccmkit frame, else
// the informers' caches, else the innermost frame of a module.
func TestAttribute(t *testing.T) {
	for _, c := range []struct {
		stack []string
		want  string
	}{
		{[]string{"encoding/json.(*decodeState).object", "github.com/brightbox/gobrightbox/v2.apiGetCollection", "github.com/ccmkit/ccmkit/providers/brightbox.(*lbDriver).List", "github.com/ccmkit/ccmkit/framework.(*lbCache).refresh"}, "providers/brightbox.(*lbDriver).List"},
		{[]string{"k8s.io/apimachinery/pkg/runtime.Decode", "k8s.io/client-go/tools/cache.(*Reflector).list", "k8s.io/client-go/tools/cache.(*Reflector).ListAndWatch"}, "k8s.io/client-go/tools/cache.(*Reflector).list"},
		{[]string{"bytes.growSlice", "golang.org/x/net/http2.(*Framer).ReadFrame", "net/http.(*conn).serve"}, "golang.org/x/net/http2.(*Framer).ReadFrame"},
		{[]string{"runtime.malg", "runtime.newproc1"}, "runtime.malg"},
	} {
		if got := attribute(stack(c.stack...)); got != c.want {
			t.Errorf("attribute(%v) = %q, want %q", c.stack, got, c.want)
		}
	}
}

var sink [][]byte

// TestTopHoldersOfARealProfile reads a heap profile as Go writes it.
func TestTopHoldersOfARealProfile(t *testing.T) {
	old := runtime.MemProfileRate
	runtime.MemProfileRate = 1
	defer func() { runtime.MemProfileRate = old }()
	for range 64 {
		sink = append(sink, make([]byte, 64<<10))
	}
	runtime.GC()
	var buf bytes.Buffer
	if err := pprof.Lookup("heap").WriteTo(&buf, 0); err != nil {
		t.Fatal(err)
	}
	top, total, err := topHolders(buf.Bytes(), 3)
	if err != nil {
		t.Fatal(err)
	}
	if total < 4<<20 || len(top) == 0 || top[0].Bytes < 4<<20 {
		t.Errorf("topHolders = %+v, total %d; want the 4 MiB this test holds on top", top, total)
	}
	sink = nil
}

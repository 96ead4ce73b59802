package main

import (
	"os"
	"strings"
	"testing"
)

func TestSlug(t *testing.T) {
	if got, want := slug("(a) 1000 nodes join"), "a-1000-nodes-join"; got != want {
		t.Errorf("slug = %q, want %q", got, want)
	}
}

// BENCH_SERVICES=0 runs the node scenarios alone.
func TestEnvIntZero(t *testing.T) {
	t.Setenv("BENCH_TEST_INT", "0")
	if got := envInt("BENCH_TEST_INT", 200); got != 0 {
		t.Errorf("envInt(0) = %d, want 0", got)
	}
	for _, v := range []string{"", "-1", "x"} {
		t.Setenv("BENCH_TEST_INT", v)
		if got := envInt("BENCH_TEST_INT", 200); got != 200 {
			t.Errorf("envInt(%q) = %d, want the default", v, got)
		}
	}
}

func TestProcessFigures(t *testing.T) {
	rss, err := peakRSS(os.Getpid())
	if err != nil || rss <= 0 {
		t.Errorf("peakRSS = %d, %v", rss, err)
	}
	if cpu, err := cpuSeconds(os.Getpid()); err != nil || cpu < 0 {
		t.Errorf("cpuSeconds = %v, %v", cpu, err)
	}
}

func TestNodeImages(t *testing.T) {
	images := nodeImages(50)
	if len(images) != 50 {
		t.Fatalf("%d images, want 50", len(images))
	}
	seen := map[string]bool{}
	for _, img := range images {
		if len(img.Names) != 2 || !strings.Contains(img.Names[0], "@sha256:") || img.SizeBytes <= 0 {
			t.Fatalf("image %+v is not as kubelet reports one", img)
		}
		if seen[img.Names[0]] {
			t.Fatalf("duplicate image %s", img.Names[0])
		}
		seen[img.Names[0]] = true
	}
}

package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ccmkit/ccmkit/internal/cluster"
)

// Every layer file of ./floor is a layer the bench measures, and the
// other way round.
func TestFloorLayersMatchTheirFiles(t *testing.T) {
	files, err := filepath.Glob("floor/layer_*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no layer files: %v", err)
	}
	var fromFiles []string
	for _, f := range files {
		name := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(f), "layer_"), ".go")
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(string(b), "//go:build floor_"+name+"\n") {
			t.Errorf("%s does not start with //go:build floor_%s", f, name)
		}
		fromFiles = append(fromFiles, "floor_"+name)
	}
	var measured []string
	for _, l := range floorLayers {
		if l.tag != "" {
			measured = append(measured, l.tag)
		}
	}
	slices.Sort(fromFiles)
	slices.Sort(measured)
	if !slices.Equal(fromFiles, measured) {
		t.Errorf("layer files %v, layers measured %v", fromFiles, measured)
	}
}

// The probe with no layer reads back the memory of a running Go program:
// both parts above zero and their sum within its peak.
func TestProbeMemory(t *testing.T) {
	root, err := cluster.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	row, err := measureBuild(ctx, root, t.TempDir(), "./internal/bench/floor", nil)
	if err != nil {
		t.Fatal(err)
	}
	if row.anon <= 0 || row.file <= 0 || row.anon+row.file > row.hwm {
		t.Errorf("anonymous %d + file-backed %d B, VmHWM %d B: want both parts above zero and within the peak", row.anon, row.file, row.hwm)
	}
	if row.packages < 10 || row.size <= 0 {
		t.Errorf("%d packages, %d B: want the runtime's packages and an executable", row.packages, row.size)
	}
}

func TestMedianFloorRow(t *testing.T) {
	runs := []floorRow{{hwm: 30}, {hwm: 10}, {hwm: 20, anon: 7}, {hwm: 40}, {hwm: 25}}
	if got := medianFloorRow(runs); got.hwm != 25 {
		t.Errorf("median of 5 = %d, want 25", got.hwm)
	}
	if got := medianFloorRow(runs[:4]); got.hwm != 20 || got.anon != 7 {
		t.Errorf("median of 4 = %+v, want the lower middle run (20) whole", got)
	}
}

package main

import (
	"bytes"
	"strings"
	"testing"
)

func benchRun(peakMiB int64, seconds float64, calls int) *results {
	return &results{
		PeakRSSBytes: peakMiB << 20, PeakAnonBytes: (peakMiB / 2) << 20, PeakFileBytes: (peakMiB / 2) << 20,
		Scenarios: []scenario{{Name: "(a) nodes join", Seconds: seconds, Total: calls, Writes: 1}},
	}
}

// The spread of a figure is its min, median and max over the runs, and
// the run a JSON reports is the median peak's.
func TestSpread(t *testing.T) {
	runs := []*results{benchRun(96, 2, 7), benchRun(90, 4, 5), benchRun(93, 3, 9)}
	rows := map[string]spreadRow{}
	for _, r := range spread(runs) {
		rows[r.name] = r
	}
	for name, want := range map[string]spreadRow{
		"peak RSS (MiB)":              {min: 90, med: 93, max: 96},
		"anonymous part (MiB)":        {min: 45, med: 46, max: 48},
		"(a) nodes join: seconds":     {min: 2, med: 3, max: 4},
		"(a) nodes join: cloud calls": {min: 5, med: 7, max: 9},
		"(a) nodes join: writes":      {min: 1, med: 1, max: 1},
	} {
		got, ok := rows[name]
		if !ok {
			t.Errorf("no row %q", name)
			continue
		}
		if got.min != want.min || got.med != want.med || got.max != want.max {
			t.Errorf("%s: min %v median %v max %v, want %v %v %v", name, got.min, got.med, got.max, want.min, want.med, want.max)
		}
	}
	if got := medianRun(runs); got != runs[2] {
		t.Errorf("median run has peak %d MiB, want 93", got.PeakRSSBytes>>20)
	}
	if got := medianRun(runs[:2]); got != runs[1] {
		t.Errorf("median of two runs has peak %d MiB, want the lower, 90", got.PeakRSSBytes>>20)
	}
	if got := median([]float64{1, 2, 4, 10}); got != 3 {
		t.Errorf("median of an even count = %v, want 3", got)
	}

	var out bytes.Buffer
	printSpread(&out, settings{Cloud: "digitalocean"}, runs)
	if !strings.Contains(out.String(), "| peak RSS (MiB) | 90.0 | 93.0 | 96.0 | 6.0 |") {
		t.Errorf("spread table:\n%s", out.String())
	}
}

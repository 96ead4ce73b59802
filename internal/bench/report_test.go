package main

import (
	"encoding/xml"
	"strings"
	"testing"
)

// runAt is a run of cloud at z whose steps made the given calls, in the
// order of steps ((c) is per hour).
func runAt(cloud string, z size, calls ...int) *record {
	r := &record{Settings: settings{Cloud: cloud, Nodes: z.Nodes, Services: z.Services}, Results: &results{PeakRSSBytes: int64(z.Nodes) << 20}}
	for i, n := range calls {
		sc := scenario{Name: steps[i].key + " step", Total: n, PeakRSSBytes: r.Results.PeakRSSBytes}
		if steps[i].key == "(c)" {
			perHour := float64(n)
			sc.PerHour = &perHour
		}
		r.Results.Scenarios = append(r.Results.Scenarios, sc)
	}
	return r
}

func TestGrowth(t *testing.T) {
	rs := runs{"x": {
		//                        (a)   (b)   (c) (d)   (e)  (f) (g)
		{100, 20}:   runAt("x", size{100, 20}, 3, 200, 0, 20, 5, 2, 100),
		{1000, 20}:  runAt("x", size{1000, 20}, 3, 2000, 0, 20, 5, 20, 100),
		{1000, 200}: runAt("x", size{1000, 200}, 3, 20000, 0, 200, 5, 20, 1000),
	}}
	want := map[string]string{
		"(a)": "constant", "(b)": "nodes and Services", "(c)": "constant", "(d)": "Services",
		"(e)": "constant", "(f)": "nodes", "(g)": "Services",
	}
	for key, w := range want {
		if got := growth(rs["x"], key); got != w {
			t.Errorf("growth of %s = %q, want %q", key, got, w)
		}
	}
	if got := growth(runs{"y": {}}["y"], "(a)"); got != "–" {
		t.Errorf("growth without the three sizes = %q, want –", got)
	}
}

func TestReportTables(t *testing.T) {
	rs := runs{
		"brightbox": {{100, 20}: runAt("brightbox", size{100, 20}, 3, 211, 120, 91, 5, 103, 60)},
		"triton":    {{100, 20}: runAt("triton", size{100, 20}, 4, 80, 0, 6, 6, 2, 40)},
	}
	rs["brightbox"][size{100, 20}].Results.Scenarios[5].Warnings = 2
	got := renderReport(rs)
	for _, want := range []string{
		"| cloud | 100 × 20 |",
		"| triton | 100, at (a) |", "| brightbox | 100, at (a) |",
		"| 2 × the leanest | 200 |",
		"| brightbox | 91, 0.0 s |", // (d)
		"103, 0.0 s, **2 Warnings**",
		"| brightbox | 120/h |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("report lacks %q:\n%s", want, got)
		}
	}
	if strings.Index(got, "| brightbox |") > strings.Index(got, "| triton |") {
		t.Error("clouds are not in internal/cluster's order (brightbox before triton)")
	}
}

func TestPlotIsWellFormedSVG(t *testing.T) {
	svg := plotSVG("a <title> & more", "MiB", []series{
		{Name: "triton", Points: []point{{100, 40}, {1000, 60}, {5000, 90}}},
		{Name: "rancher", Points: []point{{100, 0}, {1000, 1}}},
	})
	if err := xml.Unmarshal(svg, new(struct{})); err != nil {
		t.Fatalf("not XML: %v\n%s", err, svg)
	}
	if again := plotSVG("a <title> & more", "MiB", []series{
		{Name: "triton", Points: []point{{100, 40}, {1000, 60}, {5000, 90}}},
		{Name: "rancher", Points: []point{{100, 0}, {1000, 1}}},
	}); string(again) != string(svg) {
		t.Error("the same figures gave two different plots")
	}
	for _, want := range []string{"<polyline", "triton", "rancher", "1,000", "a &lt;title&gt; &amp; more"} {
		if !strings.Contains(string(svg), want) {
			t.Errorf("plot lacks %q", want)
		}
	}
}

func TestParseSizes(t *testing.T) {
	got, err := parseSizes("100x20 5000x1000")
	if err != nil || len(got) != 2 || got[1] != (size{5000, 1000}) {
		t.Errorf("parseSizes = %v, %v", got, err)
	}
	if _, err := parseSizes("100by20"); err == nil || !strings.Contains(err.Error(), "BENCH_SIZES") {
		t.Errorf("parseSizes(100by20) = %v; want an error naming BENCH_SIZES", err)
	}
	if got, _ := parseSizes(""); len(got) != len(defaultSizes) {
		t.Errorf("parseSizes(\"\") = %v, want the defaults", got)
	}
	if got := (size{5000, 1000}).Label(); got != "5,000 × 1,000" {
		t.Errorf("Label = %q", got)
	}
}

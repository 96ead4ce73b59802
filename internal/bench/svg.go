package main

import (
	"fmt"
	"math"
	"strings"
)

// point is one figure of a cloud at a node count.
type point struct{ X, Y float64 }

// series is one cloud's line.
type series struct {
	Name   string
	Points []point
}

// cloudColors keeps each cloud's color the same in every plot.
var cloudColors = map[string]string{
	"skeleton": "#7f7f7f", "triton": "#d62728", "rancher": "#1f77b4",
	"openstack": "#ff7f0e", "digitalocean": "#2ca02c", "brightbox": "#9467bd",
}

// plotSVG draws lines on log-log axes: x the node count, y the figure
// (values of 0 are drawn at the axis' floor). It is deterministic, so the
// committed plots can be checked against the runs.
func plotSVG(title, yLabel string, lines []series) []byte {
	const w, h, left, right, top, bottom = 560.0, 340.0, 64.0, 130.0, 34.0, 44.0
	xmin, xmax, ymin, ymax := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, s := range lines {
		for _, p := range s.Points {
			xmin, xmax = math.Min(xmin, p.X), math.Max(xmax, p.X)
			if p.Y > 0 {
				ymin, ymax = math.Min(ymin, p.Y), math.Max(ymax, p.Y)
			}
		}
	}
	if math.IsInf(ymin, 1) {
		ymin, ymax = 1, 10
	}
	lx0, lx1 := math.Floor(math.Log10(xmin)), math.Ceil(math.Log10(xmax))
	ly0, ly1 := math.Floor(math.Log10(ymin)), math.Ceil(math.Log10(ymax))
	if ly1 == ly0 {
		ly1++
	}
	if lx1 == lx0 {
		lx1++
	}
	px := func(x float64) float64 { return left + (math.Log10(x)-lx0)/(lx1-lx0)*(w-left-right) }
	py := func(y float64) float64 {
		if y <= 0 {
			y = math.Pow(10, ly0)
		}
		return h - bottom - (math.Log10(y)-ly0)/(ly1-ly0)*(h-top-bottom)
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="sans-serif" font-size="11">`+"\n", w, h, w, h)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	fmt.Fprintf(&b, `<text x="%.0f" y="20" font-size="13" font-weight="bold">%s</text>`+"\n", left, esc(title))
	for e := lx0; e <= lx1; e++ {
		x := px(math.Pow(10, e))
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#ddd"/>`+"\n", x, top, x, h-bottom)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle">%s</text>`+"\n", x, h-bottom+14, thousands(int(math.Pow(10, e))))
	}
	for e := ly0; e <= ly1; e++ {
		y := py(math.Pow(10, e))
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#ddd"/>`+"\n", left, y, w-right, y)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="end">%s</text>`+"\n", left-4, y+4, tick(math.Pow(10, e)))
	}
	fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle">nodes (log scale)</text>`+"\n", (left+w-right)/2, h-8)
	fmt.Fprintf(&b, `<text x="14" y="%.1f" text-anchor="middle" transform="rotate(-90 14 %.1f)">%s (log scale)</text>`+"\n", (top+h-bottom)/2, (top+h-bottom)/2, esc(yLabel))
	for i, s := range lines {
		color := cloudColors[s.Name]
		if color == "" {
			color = "black"
		}
		pts := make([]string, len(s.Points))
		for j, p := range s.Points {
			pts[j] = fmt.Sprintf("%.1f,%.1f", px(p.X), py(p.Y))
		}
		fmt.Fprintf(&b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="2"/>`+"\n", strings.Join(pts, " "), color)
		for _, p := range s.Points {
			fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="3" fill="%s"><title>%s: %s at %s nodes</title></circle>`+"\n", px(p.X), py(p.Y), color, s.Name, tick(p.Y), thousands(int(p.X)))
		}
		ly := top + 10 + float64(i)*16
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="2"/>`+"\n", w-right+12, ly, w-right+32, ly, color)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f">%s</text>`+"\n", w-right+36, ly+4, esc(s.Name))
	}
	b.WriteString("</svg>\n")
	return []byte(b.String())
}

// tick formats an axis value: 1, 10, 100, 1,000; 0.1 below one.
func tick(v float64) string {
	if v >= 1 {
		return thousands(int(math.Round(v)))
	}
	return strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.3f", v), "0"), ".")
}

func esc(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

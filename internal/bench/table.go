package main

import (
	"fmt"
	"io"
	"sort"
	"strings"
)

func printTable(w io.Writer, s settings, res *results) {
	images := ""
	if s.NodeImages > 0 {
		images = fmt.Sprintf(", %d images per node", s.NodeImages)
	}
	fmt.Fprintf(w, "\n### %s CCM benchmark (%s per cloud API call, address refresh every %s%s)\n\n", s.Cloud, s.Latency, s.AddressRefresh, images)
	fmt.Fprintln(w, "| scenario | seconds | cloud calls | writes | Warning Events | error log lines | calls/hour | calls by operation |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---|")
	for _, sc := range res.Scenarios {
		perHour := ""
		if sc.PerHour != nil {
			perHour = fmt.Sprintf("%.0f", *sc.PerHour)
		}
		fmt.Fprintf(w, "| %s | %.1f | %d | %d | %d | %d | %s | %s |\n", sc.Name, sc.Seconds, sc.Total, sc.Writes, sc.Warnings, sc.Errors, perHour, byOperation(sc.Calls))
	}
	fmt.Fprintln(w, "\nWhat held the CCM's heap at each step's peak (heap profile near the step's largest anonymous RSS; MiB in use, sampled):")
	for _, sc := range res.Scenarios {
		fmt.Fprintf(w, "- %s: peak RSS so far %.1f MiB; %s\n", sc.Name, mib(sc.PeakRSSBytes), sc.Heap)
	}
	fmt.Fprintf(w, "\nPeak RSS of the CCM process: %.1f MiB (VmHWM)\n", mib(res.PeakRSSBytes))
	fmt.Fprintf(w, "  its parts' peaks, sampled every 100 ms: anonymous (heap, stacks, runtime) %.1f MiB, file-backed (executable pages) %.1f MiB\n",
		mib(res.PeakAnonBytes), mib(res.PeakFileBytes))
	fmt.Fprintf(w, "CPU time of the CCM process: %.1f s\n", res.CPUSeconds)
}

func byOperation(calls map[string]int) string {
	ops := make([]string, 0, len(calls))
	for op := range calls {
		ops = append(ops, op)
	}
	sort.Strings(ops)
	parts := make([]string, 0, len(ops))
	for _, op := range ops {
		parts = append(parts, fmt.Sprintf("%s %d", op, calls[op]))
	}
	return strings.Join(parts, ", ")
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

package soak

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Result is what a run measured and found.
type Result struct {
	Cloud string `json:"cloud"`
	Seed  uint64 `json:"seed"`
	// Ops are the plan's operations (kills included), by kind.
	Ops      map[Kind]int `json:"ops"`
	OpsTotal int          `json:"opsTotal"`
	// Rates are the background fault rates of the op phase.
	Rates map[string]float64 `json:"rates"`
	// Faults are the faults the cloud actually injected, by kind.
	Faults map[string]int64 `json:"faults"`
	// Kills are the leaders killed; Failovers the leader changes seen;
	// LongestFailoverSeconds the longest time from a kill to the next
	// leader.
	Kills                  int     `json:"kills"`
	Failovers              int     `json:"failovers"`
	LongestFailoverSeconds float64 `json:"longestFailoverSeconds"`
	// OpSeconds is the op phase's length; ConvergeSeconds the time from the
	// faults stopping to the first check of a clean run (or to the end of
	// the budget when none came).
	OpSeconds       float64     `json:"opSeconds"`
	Converged       bool        `json:"converged"`
	ConvergeSeconds float64     `json:"convergeSeconds"`
	Violations      []Violation `json:"violations"`
	// Checked says what the last check looked at: its figures show that
	// the invariants had something to hold for.
	Checked string `json:"checked"`
	// OpErrors are operations the API server refused (not violations:
	// the soak's own requests).
	OpErrors []string `json:"opErrors,omitempty"`
	// Exits are replicas that ended without being killed.
	Exits []string `json:"exits,omitempty"`
	// WorkDir held the logs (gone once the run's cluster is stopped,
	// unless the caller gave it).
	WorkDir string `json:"workDir"`
}

func newResult(cfg Config, plan []Op) *Result {
	r := &Result{
		Cloud: cfg.Provider.Name, Seed: cfg.Seed, Ops: map[Kind]int{}, OpsTotal: len(plan),
		Rates: map[string]float64{"5xx": cfg.Rate5xx, "429": cfg.Rate429, "reset": cfg.RateResets, "latency": cfg.RateLatency},
	}
	for _, op := range plan {
		r.Ops[op.Kind]++
	}
	return r
}

// Failed reports whether the run found a violation or did not converge
// within budget.
func (r *Result) Failed(budget time.Duration) bool {
	return len(r.Violations) > 0 || !r.Converged || r.ConvergeSeconds > budget.Seconds()
}

// PrintTable writes the results as a Markdown table, then the violations
// in words.
func PrintTable(w io.Writer, results []*Result) {
	fmt.Fprintln(w, "\n| cloud | seed | ops | ops by kind | faults injected | kills | failovers | longest failover (s) | time to converge (s) | violations |")
	fmt.Fprintln(w, "|---|---:|---:|---|---|---:|---:|---:|---:|---:|")
	for _, r := range results {
		converge := fmt.Sprintf("%.1f", r.ConvergeSeconds)
		if !r.Converged {
			converge = fmt.Sprintf("> %.0f (did not)", r.ConvergeSeconds)
		}
		fmt.Fprintf(w, "| %s | %d | %d | %s | %s | %d | %d | %.1f | %s | %d |\n", r.Cloud, r.Seed, r.OpsTotal,
			counts(r.Ops), counts(r.Faults), r.Kills, r.Failovers, r.LongestFailoverSeconds, converge, len(r.Violations))
	}
	for _, r := range results {
		fmt.Fprintf(w, "\n%s seed %d: the last check saw %s", r.Cloud, r.Seed, r.Checked)
		for _, v := range r.Violations {
			fmt.Fprintf(w, "\n%s seed %d: %s", r.Cloud, r.Seed, v)
		}
		for _, e := range r.Exits {
			fmt.Fprintf(w, "\n%s seed %d: replica exit: %s", r.Cloud, r.Seed, e)
		}
	}
	fmt.Fprintln(w)
}

// counts writes a count map as "a 1, b 2", by key.
func counts[K ~string, V int | int64](m map[K]V) string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, string(k))
	}
	sort.Strings(ks)
	parts := make([]string, 0, len(ks))
	for _, k := range ks {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[K(k)]))
	}
	return strings.Join(parts, ", ")
}

// WriteJSON writes r to <dir>/<cloud>-seed<seed>.json and returns the
// path.
func WriteJSON(dir string, r *Result) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, fmt.Sprintf("%s-seed%d.json", r.Cloud, r.Seed))
	return path, os.WriteFile(path, append(b, '\n'), 0o644)
}

package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"regexp"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ccmkit/ccmkit/internal/cluster"
)

// meter measures the time, the cloud calls and the CCM's peak RSS a step
// costs.
type meter struct {
	c       *cluster.Cluster
	pid     int
	sampler *memSampler
	peaks   *peakProfiles
	// profileDir, if set, is where each step's peak heap profile is saved.
	profileDir string
	// log is the CCM's log file.
	log string
}

func (m meter) measure(ctx context.Context, name string, step func() error) (scenario, error) {
	before, writes := m.c.Sim.Stats(), m.c.Sim.Writes()
	warnings, seen, err := warningEvents(ctx, m.c)
	if err != nil {
		return scenario{}, err
	}
	logFrom := fileSize(m.log)
	m.sampler.resetPeak()
	start := time.Now()
	if err := step(); err != nil {
		return scenario{}, fmt.Errorf("%s: %w", name, err)
	}
	sc := scenario{Name: name, Seconds: time.Since(start).Seconds(), Calls: map[string]int{}, Writes: m.c.Sim.Writes() - writes}
	after, seenAfter, err := warningEvents(ctx, m.c)
	if err != nil {
		return scenario{}, err
	}
	sc.Warnings = after - warnings
	for text, n := range seenAfter[""] { // what they said, for the one reading the figures
		if d := n - seen[""][text]; d > 0 {
			fmt.Fprintf(os.Stderr, "%s: %d Warning Event(s): %s\n", name, d, text)
		}
	}
	for text, n := range seenAfter[controlPlane] {
		if d := n - seen[controlPlane][text]; d > 0 {
			fmt.Fprintf(os.Stderr, "%s: %d Warning Event(s) of the control plane, not counted: %s\n", name, d, text)
		}
	}
	errs := errorLines(m.log, logFrom)
	sc.Errors = len(errs)
	for i, line := range errs {
		if i == 5 {
			fmt.Fprintf(os.Stderr, "%s: %d more lines at error level in the CCM's log\n", name, len(errs)-i)
			break
		}
		fmt.Fprintf(os.Stderr, "%s: the CCM logged at error level: %s\n", name, line)
	}
	for op, n := range m.c.Sim.Stats() {
		if d := n - before[op]; d > 0 {
			sc.Calls[op] = d
			sc.Total += d
		}
	}
	if sc.PeakRSSBytes, err = peakRSS(m.pid); err != nil {
		return scenario{}, err
	}
	anon := int64(0)
	if st, err := procStatus(m.pid); err == nil {
		anon = st["RssAnon"]
	}
	var raw []byte
	sc.Heap, raw = m.peaks.take(anon)
	if m.profileDir != "" && raw != nil {
		if err := saveProfile(m.profileDir, name, raw); err != nil {
			return scenario{}, fmt.Errorf("%s: heap profile: %w", name, err)
		}
	}
	return sc, nil
}

// controlPlaneComponents are the kube-apiserver's own controllers that
// raise Events: with a thousand Services created at once, its repair loop
// warns ClusterIPNotAllocated about Services whose ClusterIP it allocates
// an instant later. They are not the CCM's, whose Warnings the figures
// count.
var controlPlaneComponents = map[string]bool{
	"ipallocator-repair-controller":      true,
	"portallocator-repair-controller":    true,
	"kubernetes-service-cidr-controller": true,
}

// controlPlane keys the Warnings of controlPlaneComponents in
// warningEvents' answer; "" keys the CCM's.
const controlPlane = "control plane"

// warningEvents counts the Warning Events the CCM raised, repeats
// included, and returns every Warning Event by who raised it (the CCM or
// the control plane), reason and message.
func warningEvents(ctx context.Context, c *cluster.Cluster) (int, map[string]map[string]int, error) {
	list, err := c.Kube.CoreV1().Events(metav1.NamespaceAll).List(ctx, metav1.ListOptions{FieldSelector: "type=" + corev1.EventTypeWarning})
	if err != nil {
		return 0, nil, fmt.Errorf("listing Warning Events: %w", err)
	}
	n, by := 0, map[string]map[string]int{"": {}, controlPlane: {}}
	for _, e := range list.Items {
		c, from := int(max(e.Count, 1)), ""
		if controlPlaneComponents[e.ReportingController] || controlPlaneComponents[e.Source.Component] {
			from = controlPlane
		} else {
			n += c
		}
		by[from][e.Reason+": "+e.Message] += c
	}
	return n, by, nil
}

func fileSize(path string) int64 {
	st, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return st.Size()
}

// errorLines are the lines the CCM logged at error level (klog's "E"
// prefix) in its log file from offset on.
func errorLines(path string, offset int64) []string {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return nil
	}
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if line := sc.Text(); klogError.MatchString(line) {
			out = append(out, line)
		}
	}
	return out
}

// klogError matches a klog text line at error level: "E1129 22:18:15.125358 ...".
var klogError = regexp.MustCompile(`^E\d{4} \d{2}:\d{2}:\d{2}\.\d+ `)

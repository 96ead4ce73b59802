package main

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/ccmkit/ccmkit/internal/cluster"
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

func TestErrorLines(t *testing.T) {
	path := t.TempDir() + "/ccm.log"
	before := "E1129 22:18:15.000001   10261 controller.go:302] \"before the step\"\n"
	during := "I1129 22:18:15.125403   10261 event.go:395] \"Event occurred\"\n" +
		"E1129 22:18:15.125358   10261 controller.go:302] \"Unhandled Error\" err=\"x\"\n" +
		"Error: not klog\n"
	if err := os.WriteFile(path, []byte(before+during), 0o644); err != nil {
		t.Fatal(err)
	}
	got := errorLines(path, int64(len(before)))
	if len(got) != 1 || !strings.Contains(got[0], "Unhandled Error") {
		t.Errorf("errorLines = %q, want the one error line after the offset", got)
	}
	if got := errorLines(path+".missing", 0); got != nil {
		t.Errorf("errorLines of a missing file = %q, want none", got)
	}
}

// A variant's provider settings reach the CCM, BENCH_CCM_ENV's win over
// them, and a mode the bench does not know is refused by name.
func TestRuntimeEnvVariants(t *testing.T) {
	t.Setenv("BENCH_CCM_ENV", "EXTRA=1")
	env, err := runtimeEnv("digitalocean+tag")
	if err != nil {
		t.Fatal(err)
	}
	if env["DO_LB_DROPLET_TAG"] == "" || env["EXTRA"] != "1" {
		t.Errorf("runtimeEnv(digitalocean+tag) = %v; want DO_LB_DROPLET_TAG and EXTRA", env)
	}
	if env, err := runtimeEnv("digitalocean"); err != nil || env["DO_LB_DROPLET_TAG"] != "" {
		t.Errorf("runtimeEnv(digitalocean) = %v, %v; want no tag setting", env, err)
	}
	if _, err := runtimeEnv("digitalocean+nope"); err == nil || !strings.Contains(err.Error(), "digitalocean+tag") {
		t.Errorf("runtimeEnv(digitalocean+nope) = %v; want an error naming the modes known", err)
	}
	if got := defaultClouds(); !slices.Contains(got, "digitalocean+tag") {
		t.Errorf("defaultClouds() = %v; want digitalocean+tag among them", got)
	}
}

// TestWarningEventsAreTheCCMs: the kube-apiserver's repair loop warns of
// its own, and a figure of the CCM's must not count them.
func TestWarningEventsAreTheCCMs(t *testing.T) {
	warn := func(name, reason string, count int32, source corev1.EventSource, reporting string) *corev1.Event {
		return &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}, Type: corev1.EventTypeWarning,
			Reason: reason, Message: "m", Count: count, Source: source, ReportingController: reporting}
	}
	kube := fake.NewClientset(
		warn("a", "SyncLoadBalancerFailed", 3, corev1.EventSource{Component: "service-controller"}, ""),
		warn("b", "InvalidAnnotation", 0, corev1.EventSource{Component: "service-controller"}, "service-controller"),
		warn("c", "ClusterIPNotAllocated", 5, corev1.EventSource{}, "ipallocator-repair-controller"),
		warn("d", "PortNotAllocated", 1, corev1.EventSource{Component: "portallocator-repair-controller"}, ""),
	)
	n, by, err := warningEvents(context.Background(), &cluster.Cluster{Kube: kube})
	if err != nil {
		t.Fatal(err)
	}
	if n != 4 {
		t.Errorf("counted %d Warnings, want the CCM's 4 (3 repeats of one, and one)", n)
	}
	if got := by[controlPlane]; got["ClusterIPNotAllocated: m"] != 5 || got["PortNotAllocated: m"] != 1 || len(by[""]) != 2 {
		t.Errorf("by source: %v", by)
	}
}

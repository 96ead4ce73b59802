package csitest

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kubernetes-csi/csi-test/v5/pkg/sanity"
	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"
	"github.com/onsi/gomega"
	"k8s.io/mount-utils"
	"k8s.io/utils/exec"

	"github.com/ccmkit/ccmkit/framework/csi"
)

// Options configure RunSanity.
type Options struct {
	// Setup starts the cloud under test with hv as the hypervisor of
	// its volumes (a simulator's Hypervisor option) and returns the
	// provider, talking to it. It runs in the process that runs the
	// suite (see RunSanity), so the test must make its cloud here, not
	// before RunSanity.
	Setup func(t testing.TB, hv *LoopHypervisor) csi.Provider
	// AccessTypes are the access types the suite runs with: "mount",
	// "block"; nil is both (a csi.SharedFilesystem: "mount").
	AccessTypes []string
	// Mounter, when not nil, wraps the node's mounter (e.g. an
	// NFSStandIn); it runs after Setup.
	Mounter func(t testing.TB, m mount.Interface) mount.Interface
	// VolumeSize is the size of the test volumes: nil is 64 MiB, raised
	// to the provider's minimum (sparse files: little is written).
	VolumeSize int64
	// ExpandSize is the size volumes are expanded to: nil is VolumeSize
	// plus one step of the provider's Limits (at least 16 MiB).
	ExpandSize int64
	// Parameters are the StorageClass parameters of the test volumes.
	Parameters map[string]string
	// IDGen makes valid and invalid volume and node IDs in the cloud's
	// format; nil is csi-sanity's default.
	IDGen sanity.IDGenerator
	// IdempotentCount is how often the idempotency specs repeat a call;
	// 0 is 2.
	IdempotentCount int
	// Config, when not nil, has the last word on each access type's
	// csi-sanity configuration.
	Config func(*sanity.TestConfig)
	// LogVerbosity of the driver's log (through t.Log); 0 is 2 (failed
	// calls).
	LogVerbosity int
}

// Counts are the specs of a run, by outcome.
type Counts struct {
	Passed, Failed, Skipped, Pending int
}

// Result is a csi-sanity run's outcome, in total and by access type.
type Result struct {
	Counts
	ByAccessType map[string]Counts
	// SkipReasons counts the skipped specs by the reason csi-sanity gave
	// (mostly a capability the driver does not have).
	SkipReasons map[string]int
}

func (r Result) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d passed, %d failed, %d skipped, %d pending", r.Passed, r.Failed, r.Skipped, r.Pending)
	for _, at := range slices.Sorted(maps.Keys(r.ByAccessType)) {
		c := r.ByAccessType[at]
		fmt.Fprintf(&b, "; %s: %d passed, %d failed, %d skipped, %d pending", at, c.Passed, c.Failed, c.Skipped, c.Pending)
	}
	return b.String()
}

// RunSanity runs csi-sanity (csi-test v5) against the provider opts.Setup
// returns, served by framework/csi in "all" mode on a unix socket, its
// node side on real loop devices (LoopHypervisor), in each access type,
// and returns the counts. A failed spec fails t.
//
// The suite runs in a child process in a private mount namespace (see
// InMountNamespace), where Ginkgo runs once; the cloud is made in Setup,
// which runs in the child only. It skips (or fails, see
// RequireLoopDevices) where loop devices cannot be used.
func RunSanity(t *testing.T, opts Options) Result {
	t.Helper()
	var res Result
	InMountNamespace(t, func(t *testing.T, dir string) {
		res = runSuite(t, opts, dir)
		data, err := json.Marshal(res)
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, resultFile), data, 0o600)
		}
		if err != nil {
			t.Fatal(err)
		}
	}, func(dir string) {
		data, err := os.ReadFile(filepath.Join(dir, resultFile))
		if err == nil {
			err = json.Unmarshal(data, &res)
		}
		if err != nil {
			t.Fatalf("csi-sanity result: %v", err)
		}
		t.Logf("csi-sanity: %s", res)
	})
	return res
}

const resultFile = "csi-sanity-result.json"

// runSuite runs csi-sanity in this process, which is in its own mount
// namespace.
func runSuite(t *testing.T, opts Options, dir string) Result {
	hv := newLoopHypervisor(t, dir)
	p := opts.Setup(t, hv)
	dopts := csi.Options{Provider: p, ByIDDir: hv.ByIDDir}
	if opts.Mounter != nil {
		dopts.Mounter = mount.NewSafeFormatAndMount(opts.Mounter(t, mount.New("")), exec.New())
	}
	endpoint := StartDriver(t, dopts, opts.LogVerbosity).Endpoint

	accessTypes := opts.AccessTypes
	if len(accessTypes) == 0 {
		accessTypes = []string{"mount", "block"}
		if _, shared := p.(csi.SharedFilesystem); shared {
			accessTypes = []string{"mount"}
		}
	}
	size, expand := testSizes(p.Limits(), opts.VolumeSize, opts.ExpandSize)
	var contexts []*sanity.TestContext
	for _, at := range accessTypes {
		cfg := sanity.NewTestConfig()
		base := filepath.Join(dir, "sanity-"+at)
		if err := os.MkdirAll(base, 0o750); err != nil {
			t.Fatal(err)
		}
		cfg.Address = endpoint
		cfg.TargetPath, cfg.StagingPath = filepath.Join(base, "target"), filepath.Join(base, "staging")
		cfg.TestVolumeAccessType = at
		cfg.TestVolumeSize, cfg.TestVolumeExpandSize = size, expand
		cfg.TestVolumeParameters = opts.Parameters
		cfg.TestNodeVolumeAttachLimit = true
		cfg.IdempotentCount = cmp.Or(opts.IdempotentCount, 2)
		if opts.IDGen != nil {
			cfg.IDGen = opts.IDGen
		}
		if opts.Config != nil {
			opts.Config(&cfg)
		}
		ginkgo.Describe("["+at+"]", func() { contexts = append(contexts, sanity.GinkgoTest(&cfg)) })
	}
	var res Result
	ginkgo.ReportAfterSuite("counts", func(r ginkgo.Report) { res = count(r) })
	gomega.RegisterFailHandler(ginkgo.Fail)
	suite, reporter := ginkgo.GinkgoConfiguration()
	reporter.Succinct = !testing.Verbose()
	ginkgo.RunSpecs(t, "csi-sanity "+p.Name(), suite, reporter)
	for _, c := range contexts {
		c.Finalize()
	}
	return res
}

// testSizes are the volume and expansion sizes in the provider's steps.
func testSizes(l csi.Limits, size, expand int64) (int64, int64) {
	step := max(l.StepBytes, 1)
	up := func(n int64) int64 { return (n + step - 1) / step * step }
	if size == 0 {
		size = up(max(64<<20, l.MinBytes))
	}
	if expand == 0 {
		expand = up(size + max(step, 16<<20))
	}
	return size, expand
}

func count(r ginkgo.Report) Result {
	res := Result{ByAccessType: map[string]Counts{}, SkipReasons: map[string]int{}}
	for _, s := range r.SpecReports {
		if s.LeafNodeType != types.NodeTypeIt {
			continue
		}
		at := ""
		if len(s.ContainerHierarchyTexts) > 0 {
			at = strings.Trim(s.ContainerHierarchyTexts[0], "[]")
		}
		c := res.ByAccessType[at]
		for _, cc := range []*Counts{&c, &res.Counts} {
			switch {
			case s.State == types.SpecStatePassed:
				cc.Passed++
			case s.State == types.SpecStateSkipped:
				cc.Skipped++
				if cc == &c {
					res.SkipReasons[s.Failure.Message]++
				}
			case s.State == types.SpecStatePending:
				cc.Pending++
			case s.State.Is(types.SpecStateFailureStates):
				cc.Failed++
			}
		}
		res.ByAccessType[at] = c
	}
	return res
}

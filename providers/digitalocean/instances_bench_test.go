package digitalocean_test

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"runtime"
	"strconv"
	"sync"
	"testing"

	"k8s.io/klog/v2/ktesting"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/providers/digitalocean"
	"github.com/ccmkit/ccmkit/providers/digitalocean/dosim"
)

// BenchmarkListInstances lists 1,000 droplets (5 pages of 200, the
// instance cache's refresh) and reports peak-live-MB: the most the heap
// held, above what it held before the list, when a page was asked for.
// What the driver keeps of the pages it has read is what that measures:
// the instance cache's refresh is the peak of a CCM at rest.
func BenchmarkListInstances(b *testing.B) {
	for _, n := range []int{1000, 5000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			sim := dosim.NewServer(b, dosim.Options{})
			for range n {
				sim.AddDroplet(dosim.Droplet{})
			}
			var (
				mu         sync.Mutex
				base, peak uint64
				ms         runtime.MemStats
			)
			live := func() uint64 {
				runtime.GC()
				runtime.ReadMemStats(&ms)
				return ms.HeapAlloc
			}
			target, _ := url.Parse(sim.URL())
			proxy := httputil.NewSingleHostReverseProxy(target)
			front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				if h := live(); h > base {
					peak = max(peak, h-base)
				}
				mu.Unlock()
				proxy.ServeHTTP(w, r)
			}))
			b.Cleanup(front.Close)
			_, ctx := ktesting.NewTestContext(b)
			cloud, _, err := newCloudCtx(ctx, digitalocean.New(), sim.Env(front.URL))
			if err != nil {
				b.Fatal(err)
			}
			inst := cloud.Provider().(framework.InstancesProvider).Instances()
			b.ResetTimer()
			for range b.N {
				mu.Lock()
				base, peak = live(), 0
				mu.Unlock()
				all, err := inst.ListInstances(ctx)
				if err != nil || len(all) != n {
					b.Fatalf("listed %d droplets, err %v", len(all), err)
				}
			}
			b.ReportMetric(float64(peak)/(1<<20), "peak-live-MB")
		})
	}
}

package framework

import (
	"fmt"
	"hash/fnv"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	utilcache "k8s.io/apimachinery/pkg/util/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
)

// Limits of the problem log.
const (
	// problemLogServices bounds how many Services the log remembers; the
	// least recently warned are forgotten first.
	problemLogServices = 10_000
	// problemLogTTL is how long a Service's problems are remembered: a
	// problem that lasts is shown again this often.
	problemLogTTL = time.Hour
)

// problemLog emits a Service's Warning Events (and progress Events) once
// per distinct problem per change of the Service, however often the
// service controller retries: client-go lets about 25 Events per object
// through before it throttles, and a Warning repeated on every retry would
// use them up, so that a later, different mistake would never be shown.
// The log keeps every retry; an Event is written for news only.
type problemLog struct {
	recorder record.EventRecorder
	services *utilcache.LRUExpireCache // types.UID -> *serviceProblems
}

// serviceProblems are the Events emitted for one version of a Service.
type serviceProblems struct {
	mu      sync.Mutex
	version uint64 // fingerprint of what the user controls
	emitted map[string]bool
}

func newProblemLog(recorder record.EventRecorder) *problemLog {
	return &problemLog{recorder: recorder, services: utilcache.NewLRUExpireCache(problemLogServices)}
}

// event records an Event on svc. Normal Events are written every time;
// a Warning (or a Normal Event with once set) only when svc has not had
// the same one since it last changed.
func (p *problemLog) event(svc *corev1.Service, eventType, reason string, once bool, format string, args ...any) {
	if p.recorder == nil {
		return
	}
	msg := fmt.Sprintf(format, args...)
	if (eventType == corev1.EventTypeWarning || once) && !p.first(svc, reason+"\x00"+msg) {
		klog.V(4).InfoS("Not repeating an Event the Service already has", "service", klog.KObj(svc), "reason", reason, "message", msg)
		return
	}
	p.recorder.Event(svc, eventType, reason, msg)
}

// first reports whether key is news for svc's current version, and notes it.
func (p *problemLog) first(svc *corev1.Service, key string) bool {
	version := serviceVersion(svc)
	var sp *serviceProblems
	if v, ok := p.services.Get(svc.UID); ok {
		sp = v.(*serviceProblems)
	} else {
		sp = &serviceProblems{version: version}
		p.services.Add(svc.UID, sp, problemLogTTL)
	}
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if sp.version != version {
		sp.version, sp.emitted = version, nil
	}
	if sp.emitted[key] {
		return false
	}
	if sp.emitted == nil {
		sp.emitted = map[string]bool{}
	}
	sp.emitted[key] = true
	return true
}

// forget drops what the log knows of a Service (it was deleted).
func (p *problemLog) forget(uid types.UID) { p.services.Remove(uid) }

// serviceVersion fingerprints what the user changes on a Service: its
// spec (the generation) and its annotations. Status writes do not count.
func serviceVersion(svc *corev1.Service) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d\x00", svc.Generation)
	keys := make([]string, 0, len(svc.Annotations))
	for k := range svc.Annotations {
		if k != ProgressAnnotation { // the pipeline's own
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(h, "%s\x00%s\x00", k, svc.Annotations[k])
	}
	return h.Sum64()
}

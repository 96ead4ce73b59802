package soak

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/ccmkit/ccmkit/internal/cluster"
)

// LeaderElection are the CCM flags of the replicas, as the e2e suite's
// failover test has them: a lost leader is replaced within seconds.
var LeaderElection = []string{
	"--leader-elect=true",
	"--leader-elect-lease-duration=4s",
	"--leader-elect-renew-deadline=3s",
	"--leader-elect-retry-period=1s",
}

// acquired is what a CCM logs once it holds the lease.
var acquired = []byte("successfully acquired lease")

// replicas keeps two CCM replicas running under leader election: one that
// exits (killed or not) is replaced at once by a new one, ccm-<n>. It
// tells the leader from the replicas' logs (the live one that logged
// acquiring the lease), counts leader changes and times each failover
// from the kill to the next leader.
type replicas struct {
	c    *cluster.Cluster
	args []string
	logf func(string, ...any)

	mu        sync.Mutex
	live      []*replica
	next      int
	stopping  bool
	leader    *replica
	killedAt  time.Time // the last kill whose failover is not yet timed
	failovers []time.Duration
	changes   int
	kills     int
	exits     []string // replicas that ended without being killed
	wg        sync.WaitGroup
}

type replica struct {
	ccm      *cluster.CCM
	offset   int64
	acquired bool
	killed   bool
}

func newReplicas(c *cluster.Cluster, logf func(string, ...any), extraArgs ...string) *replicas {
	return &replicas{c: c, args: append(append([]string{}, LeaderElection...), extraArgs...), logf: logf}
}

// start runs a new replica and its watcher, which replaces it when it
// ends.
func (r *replicas) start() error {
	r.mu.Lock()
	name := fmt.Sprintf("ccm-%d", r.next)
	r.next++
	r.mu.Unlock()
	ccm, err := r.c.StartCCM(name, r.args...)
	if err != nil {
		return err
	}
	rep := &replica{ccm: ccm}
	r.mu.Lock()
	r.live = append(r.live, rep)
	r.mu.Unlock()
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		err := ccm.Wait(context.Background())
		r.mu.Lock()
		stopping := r.stopping
		for i, x := range r.live {
			if x == rep {
				r.live = append(r.live[:i], r.live[i+1:]...)
				break
			}
		}
		if !rep.killed && !stopping {
			r.exits = append(r.exits, exitReason(ccm, err))
		}
		r.mu.Unlock()
		if !stopping {
			r.replace(ccm.Name)
		}
	}()
	return nil
}

// replace starts the replica that takes the place of the one called name,
// trying again every second while starting fails (a port taken, say): a
// replica given up would leave the run with one fewer for good.
func (r *replicas) replace(name string) {
	for {
		err := r.start()
		if err == nil {
			return
		}
		r.logf("replacing %s: %v; trying again in 1s", name, err)
		time.Sleep(time.Second)
		r.mu.Lock()
		stopping := r.stopping
		r.mu.Unlock()
		if stopping {
			return
		}
	}
}

// watch follows the replicas' logs every 100ms until ctx ends.
func (r *replicas) watch(ctx context.Context) {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			r.poll()
		}
	}
}

func (r *replicas) poll() {
	r.mu.Lock()
	defer r.mu.Unlock()
	var leader *replica
	for _, rep := range r.live {
		if !rep.acquired {
			rep.acquired = rep.readLog()
		}
		if rep.acquired && !rep.ccm.Exited() && !rep.killed {
			leader = rep
		}
	}
	if leader == nil || leader == r.leader {
		return
	}
	if r.leader != nil {
		r.changes++
	}
	if !r.killedAt.IsZero() {
		r.failovers = append(r.failovers, time.Since(r.killedAt))
		r.killedAt = time.Time{}
	}
	r.leader = leader
}

// readLog reads what the replica logged since the last call, whole lines
// only, and reports whether it acquired the lease.
func (rep *replica) readLog() bool {
	f, err := os.Open(rep.ccm.LogPath)
	if err != nil {
		return false
	}
	defer f.Close()
	b, err := io.ReadAll(io.NewSectionReader(f, rep.offset, 1<<40))
	if err != nil {
		return false
	}
	end := bytes.LastIndexByte(b, '\n') + 1
	rep.offset += int64(end)
	return bytes.Contains(bytes.ToLower(b[:end]), acquired)
}

// currentLeader is the live replica that holds the lease, nil when none
// does (an election is under way).
func (r *replicas) currentLeader() *replica {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.leader == nil || r.leader.killed || r.leader.ccm.Exited() {
		return nil
	}
	return r.leader
}

// killLeader SIGKILLs the leader, waiting up to wait for there to be one;
// it reports whether it killed one.
func (r *replicas) killLeader(ctx context.Context, wait time.Duration) bool {
	deadline := time.Now().Add(wait)
	for {
		if l := r.currentLeader(); l != nil {
			r.mu.Lock()
			if l.killed {
				r.mu.Unlock()
				return false
			}
			l.killed = true
			r.kills++
			r.killedAt = time.Now()
			r.mu.Unlock()
			l.ccm.Kill()
			return true
		}
		if !time.Now().Before(deadline) || sleep(ctx, 100*time.Millisecond) != nil {
			return false
		}
	}
}

// waitForLeader waits up to wait for a live replica to hold the lease.
func (r *replicas) waitForLeader(ctx context.Context, wait time.Duration) {
	deadline := time.Now().Add(wait)
	for r.currentLeader() == nil && time.Now().Before(deadline) && sleep(ctx, 100*time.Millisecond) == nil {
	}
}

// stop ends the replacing; the cluster stops the processes.
func (r *replicas) stop() {
	r.mu.Lock()
	r.stopping = true
	r.mu.Unlock()
}

// stats are the kills, leader changes, failover times and unexpected
// exits so far.
func (r *replicas) stats() (kills, changes int, failovers []time.Duration, exits []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.kills, r.changes, append([]time.Duration(nil), r.failovers...), append([]string(nil), r.exits...)
}

// panicPrefix starts the exit reason of a replica that panicked.
const panicPrefix = "panic: "

// exitReason says why a replica ended without being killed: its panic
// line (prefixed by panicPrefix) when it panicked, else its last log line.
func exitReason(ccm *cluster.CCM, err error) string {
	b, _ := os.ReadFile(ccm.LogPath)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, panicPrefix) {
			return fmt.Sprintf("%s%s: %s (%s)", panicPrefix, ccm.Name, l, strings.Join(lines[i+1:min(len(lines), i+6)], " | "))
		}
	}
	return fmt.Sprintf("%s exited (%v): %s", ccm.Name, err, lines[len(lines)-1])
}

func panicked(reason string) bool { return strings.HasPrefix(reason, panicPrefix) }

// sleep waits d or until ctx ends, returning ctx's error then.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

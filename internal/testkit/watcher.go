package testkit

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"
)

// Watcher reads every node of a registry cluster every interval, for the
// whole of a test, and records what must never happen: an instance that
// a node served while it was live disappearing from that node (a lost
// registration), and an instance that a node stopped serving after its
// cancel (or eviction) being served by it again (a resurrected cancel).
// The test moves an instance between the two (Live, Ending) before it
// acts.
type Watcher struct {
	mu    sync.Mutex
	nodes []watched
	track map[string]*tracked
	bad   []string
	stop  chan struct{}
	done  chan struct{}
	once  sync.Once
}

// A Read returns which of the keys ("APP/id") a node serves now; an error
// (down, starting, syncing: 503) leaves nothing to judge.
type Read func(keys []string) (map[string]bool, error)

type watched struct {
	name string
	read Read
}

type tracked struct {
	live      bool
	seen      map[string]bool
	goneSince map[string]time.Time // node -> first sample without it
}

// NewWatcher starts a Watcher reading every interval; it stops when the
// test ends, or at Close.
func NewWatcher(t testing.TB, interval time.Duration) *Watcher {
	w := &Watcher{track: map[string]*tracked{}, stop: make(chan struct{}), done: make(chan struct{})}
	go w.run(interval)
	t.Cleanup(w.Close)
	return w
}

// Add has the node name read with read from now on.
func (w *Watcher) Add(name string, read Read) {
	w.mu.Lock()
	w.nodes = append(w.nodes, watched{name, read})
	w.mu.Unlock()
}

// Live: from now on, a node that has served key must keep serving it.
func (w *Watcher) Live(key string) { w.follow(key, true) }

// Ending: key is about to be cancelled (or to expire); a node that has
// stopped serving it must never serve it again.
func (w *Watcher) Ending(key string) { w.follow(key, false) }

func (w *Watcher) follow(key string, live bool) {
	w.mu.Lock()
	w.track[key] = &tracked{live: live, seen: map[string]bool{}, goneSince: map[string]time.Time{}}
	w.mu.Unlock()
}

// Forget stops following key.
func (w *Watcher) Forget(key string) {
	w.mu.Lock()
	delete(w.track, key)
	w.mu.Unlock()
}

// GoneSince reports when each node was first seen without key, since
// Ending.
func (w *Watcher) GoneSince(key string) map[string]time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := map[string]time.Time{}
	if tr := w.track[key]; tr != nil {
		for k, v := range tr.goneSince {
			out[k] = v
		}
	}
	return out
}

// Violations are the lost registrations and resurrected cancels seen.
func (w *Watcher) Violations() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.bad)
}

// Check fails the test with each violation.
func (w *Watcher) Check(t testing.TB) {
	t.Helper()
	for _, v := range w.Violations() {
		t.Error(v)
	}
}

// Close stops the reads and waits for the one under way.
func (w *Watcher) Close() {
	w.once.Do(func() { close(w.stop) })
	<-w.done
}

func (w *Watcher) run(interval time.Duration) {
	defer close(w.done)
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-w.stop:
			return
		case <-tick.C:
		}
		w.mu.Lock()
		nodes := slices.Clone(w.nodes)
		keys := make([]string, 0, len(w.track))
		for k := range w.track {
			keys = append(keys, k)
		}
		w.mu.Unlock()
		for _, n := range nodes {
			at := time.Now()
			if reg, err := n.read(keys); err == nil {
				w.judge(n.name, at, reg)
			}
		}
	}
}

func (w *Watcher) judge(node string, at time.Time, reg map[string]bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for key, tr := range w.track {
		present := reg[key]
		switch {
		case tr.live && present:
			tr.seen[node] = true
		case tr.live && tr.seen[node]:
			w.bad = append(w.bad, fmt.Sprintf("%s: LOST registration %s at %s", node, key, at.Format("15:04:05.000")))
			tr.seen[node] = false // report each loss once
		case !tr.live && !present:
			if _, ok := tr.goneSince[node]; !ok {
				tr.goneSince[node] = at
			}
		case !tr.live && present:
			if _, ok := tr.goneSince[node]; ok {
				w.bad = append(w.bad, fmt.Sprintf("%s: RESURRECTED %s at %s (gone since %s)", node, key,
					at.Format("15:04:05.000"), tr.goneSince[node].Format("15:04:05.000")))
				delete(tr.goneSince, node)
			}
		}
	}
}

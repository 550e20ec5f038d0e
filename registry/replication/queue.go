package replication

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/eurekagate/eurekagate/eureka"
)

// task is one queued write for one peer.
type task struct {
	key     string
	item    Item
	expires time.Time
}

// taskKey is Eureka's dedupe key: "<type>#<APP>/<id>".
func taskKey(it Item) string {
	kind := "register"
	switch it.Action {
	case ActionHeartbeat:
		kind = "heartbeat"
	case ActionCancel:
		kind = "cancel"
	case ActionStatusUpdate:
		kind = "statusUpdate"
	case ActionDeleteStatusOverride:
		kind = "deleteStatusOverride"
	}
	return kind + "#" + strings.ToUpper(it.AppName) + "/" + it.ID
}

// peer is one node's queue and its counters.
type peer struct {
	url eureka.ServiceURL
	// ctx ends when the Peers stop or the peer leaves (cancel); done is
	// closed when its sender, if running, has returned.
	ctx     context.Context
	cancel  context.CancelFunc
	done    chan struct{}
	running bool // a sender was started; under membership.mu

	mu    sync.Mutex
	order []string // keys, oldest first; may hold keys already taken
	tasks map[string]*task
	wake  chan struct{}
	// urgent is signalled by a task that is no heartbeat: it sends the
	// heartbeats waiting for their batch at once.
	urgent chan struct{}
	// withdrawn are cancels taken back (withdrawCancel) while they may be
	// in a batch in flight: if that batch fails, requeue drops them.
	withdrawn map[string]bool

	// identified is set once an answer told who the peer is; self if it
	// is this node, which is then skipped.
	identified, self atomic.Bool

	sent, failures, dropped atomic.Uint64
	lastSuccess             atomic.Int64 // unix nanos
	lastError               atomic.Value // string
	down                    atomic.Bool
}

// enqueue adds or replaces a task; a full queue drops its oldest. A
// cancel goes to the front, ahead of the heartbeats queued before it, and
// replaces the instance's other pending tasks, which it makes moot: so a
// peer that comes back hears of the cancel first, and a cancel outlives a
// backlog (CancelTTL).
func (pe *peer) enqueue(it Item, now time.Time, cfg Config) {
	key := taskKey(it)
	ttl := cfg.TaskTTL
	if it.Action == ActionCancel {
		ttl = cfg.CancelTTL
	}
	pe.mu.Lock()
	switch t := pe.tasks[key]; {
	case t != nil:
		t.item, t.expires = it, now.Add(ttl)
	case it.Action == ActionCancel:
		delete(pe.withdrawn, key)
		for _, action := range []string{ActionRegister, ActionHeartbeat, ActionStatusUpdate, ActionDeleteStatusOverride} {
			delete(pe.tasks, taskKey(Item{Action: action, AppName: it.AppName, ID: it.ID}))
		}
		pe.tasks[key] = &task{key: key, item: it, expires: now.Add(ttl)}
		pe.order = append([]string{key}, pe.order...)
	default:
		pe.tasks[key] = &task{key: key, item: it, expires: now.Add(ttl)}
		pe.order = append(pe.order, key)
		for len(pe.tasks) > cfg.MaxQueue {
			pe.popOldestLocked()
			pe.dropped.Add(1)
		}
	}
	pe.mu.Unlock()
	select {
	case pe.wake <- struct{}{}:
	default:
	}
	if it.Action != ActionHeartbeat {
		select {
		case pe.urgent <- struct{}{}:
		default:
		}
	}
}

// popOldestLocked removes and returns the oldest task. The caller holds
// pe.mu.
func (pe *peer) popOldestLocked() *task {
	for len(pe.order) > 0 {
		key := pe.order[0]
		pe.order = pe.order[1:]
		if t := pe.tasks[key]; t != nil {
			delete(pe.tasks, key)
			return t
		}
	}
	return nil
}

// requeue puts the tasks of a failed batch back in front, unless a newer
// task for the same key arrived meanwhile, within the queue's bound: on
// overflow the oldest go, as in enqueue.
func (pe *peer) requeue(batch []*task, maxQueue int) {
	pe.mu.Lock()
	defer pe.mu.Unlock()
	front := make([]string, 0, len(batch))
	for _, t := range batch {
		if pe.withdrawn[t.key] {
			delete(pe.withdrawn, t.key)
			continue
		}
		if pe.tasks[t.key] == nil {
			pe.tasks[t.key] = t
			front = append(front, t.key)
		}
	}
	pe.order = append(front, pe.order...)
	for len(pe.tasks) > maxQueue {
		pe.popOldestLocked()
		pe.dropped.Add(1)
	}
}

// withdrawCancel takes back the cancel of app's instance id waiting for
// this peer, if any, and one that may be in a batch in flight.
func (pe *peer) withdrawCancel(app, id string) {
	key := taskKey(Item{Action: ActionCancel, AppName: app, ID: id})
	pe.mu.Lock()
	defer pe.mu.Unlock()
	delete(pe.tasks, key) // its place in order is skipped once gone
	if pe.withdrawn == nil || len(pe.withdrawn) > 10000 {
		pe.withdrawn = map[string]bool{} // bounded: flags of batches that went through
	}
	pe.withdrawn[key] = true
}

// heartbeatsOnly reports whether every queued task is a heartbeat.
func (pe *peer) heartbeatsOnly() bool {
	pe.mu.Lock()
	defer pe.mu.Unlock()
	for _, t := range pe.tasks {
		if t.item.Action != ActionHeartbeat {
			return false
		}
	}
	return true
}

func (pe *peer) length() int {
	pe.mu.Lock()
	defer pe.mu.Unlock()
	return len(pe.tasks)
}

// take removes up to max tasks, oldest first, dropping expired ones.
func (pe *peer) take(max int, now time.Time) (batch []*task, expired int) {
	pe.mu.Lock()
	defer pe.mu.Unlock()
	for len(batch) < max {
		t := pe.popOldestLocked()
		if t == nil {
			break
		}
		if now.After(t.expires) {
			expired++
			continue
		}
		batch = append(batch, t)
	}
	// Compact the order slice when it is mostly consumed keys.
	if cap(pe.order) > 4*len(pe.order)+1024 {
		pe.order = append([]string(nil), pe.order...)
	}
	return batch, expired
}

// drop empties the queue and returns how many tasks it held.
func (pe *peer) drop() int {
	pe.mu.Lock()
	defer pe.mu.Unlock()
	n := len(pe.tasks)
	pe.tasks, pe.order = map[string]*task{}, nil
	return n
}

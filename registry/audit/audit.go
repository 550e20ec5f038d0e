// Package audit writes the registry's audit trail: one JSON line per
// event (a write refused to a credential, a write by the operator role),
// to a file or stdout, from one goroutine of its own fed by a bounded
// channel, so that recording never blocks a request: an event that finds
// the channel full is dropped and counted (Dropped, and the process-wide
// DroppedTotal that /metrics reports as eureka_audit_dropped_total).
package audit

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultBuffer is how many events may wait for the writer before new
// ones are dropped: 4096.
const DefaultBuffer = 4096

// Entry is one line of the trail. Account or Cert names the credential
// (one of them is set); Source is the client's address; Action is what
// the request asked (register, renew, cancel, status, delete-status,
// metadata, replication); App and Instance what it named; Outcome is
// "refused" or "done" (written, whatever the answer), Status the answer's
// HTTP status.
type Entry struct {
	Time     time.Time `json:"time"`
	Account  string    `json:"account,omitempty"`
	Cert     string    `json:"cert,omitempty"`
	Source   string    `json:"source"`
	Action   string    `json:"action"`
	App      string    `json:"app,omitempty"`
	Instance string    `json:"instance,omitempty"`
	Outcome  string    `json:"outcome"`
	Status   int       `json:"status"`
}

// Log is an audit trail being written. Its goroutine runs from New (or
// Open) until Close, which its owner calls after the servers that record
// into it have stopped.
type Log struct {
	ch      chan Entry
	done    chan struct{}
	w       io.Writer
	closer  io.Closer // nil for stdout
	err     error     // the first write error, reported by Close
	mu      sync.RWMutex
	closed  bool
	dropped atomic.Uint64
}

var droppedTotal atomic.Uint64

// DroppedTotal is how many events every Log of this process dropped.
func DroppedTotal() uint64 { return droppedTotal.Load() }

// Open starts a trail written to path, appended to and created with mode
// 0600 (it names accounts and addresses), or to the process's standard
// output when path is "stdout".
func Open(path string) (*Log, error) {
	if path == "" {
		return nil, errors.New("the audit log needs a file path or stdout")
	}
	if path == "stdout" {
		return New(os.Stdout, nil, DefaultBuffer), nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	return New(f, f, DefaultBuffer), nil
}

// New starts a trail written to w, holding up to buffer events (at least
// one); closer, if not nil, is closed by Close after the last line.
func New(w io.Writer, closer io.Closer, buffer int) *Log {
	l := &Log{ch: make(chan Entry, max(1, buffer)), done: make(chan struct{}), w: w, closer: closer}
	go l.run()
	return l
}

// Record queues e, with the time of now if e has none; it never waits.
// An event that finds the queue full, or the Log closed, is dropped and
// counted.
func (l *Log) Record(e Entry) {
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	l.mu.RLock()
	defer l.mu.RUnlock()
	if !l.closed {
		select {
		case l.ch <- e:
			return
		default:
		}
	}
	l.dropped.Add(1)
	droppedTotal.Add(1)
}

// Dropped is how many events this Log dropped.
func (l *Log) Dropped() uint64 { return l.dropped.Load() }

// Close writes the events queued, flushes and closes the file, and stops
// the goroutine; it reports the first write error. Close is idempotent.
func (l *Log) Close() error {
	l.mu.Lock()
	if !l.closed {
		l.closed = true
		close(l.ch)
	}
	l.mu.Unlock()
	<-l.done
	return l.err
}

// run writes the lines, flushing whenever the queue is empty so that a
// line is on disk as soon as nothing else waits.
func (l *Log) run() {
	defer close(l.done)
	bw := bufio.NewWriter(l.w)
	enc := json.NewEncoder(bw)
	keep := func(err error) {
		if err != nil && l.err == nil {
			l.err = err
		}
	}
	for e := range l.ch {
		e.Time = e.Time.UTC()
		keep(enc.Encode(e))
		if len(l.ch) == 0 {
			keep(bw.Flush())
		}
	}
	keep(bw.Flush())
	if l.closer != nil {
		keep(l.closer.Close())
	}
}

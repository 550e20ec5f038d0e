package testkit

import (
	"bytes"
	"sync"
)

// Output collects what a process or a goroutine writes, for the test to
// read while it runs: Write and String are safe to call together. The
// zero value is ready to use.
type Output struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write appends p.
func (o *Output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.Write(p)
}

// String returns all that was written so far.
func (o *Output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.String()
}

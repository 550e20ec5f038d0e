package proc

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"
)

// errClosed is Await's error when the output ends before a line matches.
var errClosed = errors.New("output closed")

// Output is what a process writes, kept whole and as its complete lines,
// safe to read while it grows; a reader can wait for a line. The zero
// value is ready to use.
type Output struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	lines  []string
	part   int           // where in buf the line being written begins
	grew   chan struct{} // closed at the next write (or close), then replaced
	closed bool
}

// Write appends b, and wakes the waiters.
func (o *Output) Write(b []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.buf.Write(b)
	for {
		rest := o.buf.Bytes()[o.part:]
		nl := bytes.IndexByte(rest, '\n')
		if nl < 0 {
			break
		}
		o.lines = append(o.lines, strings.TrimSuffix(string(rest[:nl]), "\r"))
		o.part += nl + 1
	}
	o.wake()
	return len(b), nil
}

// close ends the output: a last line without its newline counts as one.
func (o *Output) close() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if rest := o.buf.Bytes()[o.part:]; len(rest) > 0 {
		o.lines = append(o.lines, string(rest))
		o.part = o.buf.Len()
	}
	o.closed = true
	o.wake()
}

// wake wakes the waiters; o.mu is held.
func (o *Output) wake() {
	if o.grew != nil {
		close(o.grew)
	}
	o.grew = make(chan struct{})
}

// String is all the output so far.
func (o *Output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.String()
}

// Tail is the output's last n bytes.
func (o *Output) Tail(n int) string {
	o.mu.Lock()
	defer o.mu.Unlock()
	b := o.buf.Bytes()
	return string(b[max(0, len(b)-n):])
}

// Lines are the complete lines so far, without their newlines.
func (o *Output) Lines() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.lines[:len(o.lines):len(o.lines)]
}

// Count is how many of the lines so far match re.
func (o *Output) Count(re *regexp.Regexp) int {
	n := 0
	for _, l := range o.Lines() {
		if re.MatchString(l) {
			n++
		}
	}
	return n
}

// Await waits up to d for a line matching re and returns its submatches;
// its error says whether the output ended first or d passed.
func (o *Output) Await(re *regexp.Regexp, d time.Duration) ([]string, error) {
	var m []string
	i := 0 // the lines before it matched nothing
	err := o.wait(d, fmt.Sprintf("a line matched %q", re), func() bool {
		lines := o.Lines()
		for ; i < len(lines); i++ {
			if m = re.FindStringSubmatch(lines[i]); m != nil {
				return true
			}
		}
		return false
	})
	return m, err
}

// Until waits up to d for cond to hold of the whole output so far,
// asking it again at each write; what names the wait in its error.
func (o *Output) Until(cond func(text string) bool, d time.Duration, what string) error {
	return o.wait(d, what, func() bool { return cond(o.String()) })
}

// wait calls check now and after each write until it holds; its error
// wraps errClosed when the output ends first, or says d passed.
func (o *Output) wait(d time.Duration, what string, check func() bool) error {
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	for {
		o.mu.Lock()
		if o.grew == nil {
			o.grew = make(chan struct{})
		}
		grew, closed := o.grew, o.closed // before check: a write during it wakes the select
		o.mu.Unlock()
		if check() {
			return nil
		}
		if closed {
			return fmt.Errorf("%w before %s", errClosed, what)
		}
		select {
		case <-grew:
		case <-deadline.C:
			return fmt.Errorf("not %s within %v", what, d)
		}
	}
}

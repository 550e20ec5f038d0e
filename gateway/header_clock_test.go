package gateway

import (
	"testing"
	"time"
)

// The header clock turns a bare-LF terminator into CRLFCRLF, which
// fasthttp waits for, and leaves everything else as it came.
func TestHeaderClockTerminators(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"GET / HTTP/1.1\r\nHost: a\r\n\r\n", "GET / HTTP/1.1\r\nHost: a\r\n\r\n"},
		{"GET / HTTP/1.1\nHost: a\n\n", "GET / HTTP/1.1\nHost: a\r\n\r\n"},
		{"GET / HTTP/1.1\nHost: a\n\nbody\n\n", "GET / HTTP/1.1\nHost: a\r\n\r\nbody\n\n"},
		{"GET / HTTP/1.1\r\nHost: a\r\n\n", "GET / HTTP/1.1\r\nHost: a\r\n\r\n"},
		{"GET / HTTP/1.1\nHost: a\n\r\n", "GET / HTTP/1.1\nHost: a\r\n\r\n"},
		{"\r\n\nGET / HTTP/1.1\nHost: a\n\n", "\r\n\nGET / HTTP/1.1\nHost: a\r\n\r\n"},
		{"GET / HTTP/1.1\nHost: a\n", "GET / HTTP/1.1\nHost: a\n"},
	} {
		h := headerClock{limit: time.Minute}
		buf := make([]byte, len(c.in)+8)
		n := h.saw(buf, copy(buf, c.in))
		if got := string(buf[:n]); got != c.want {
			t.Errorf("%q became %q, want %q", c.in, got, c.want)
		}
		if h.started == 0 {
			t.Errorf("%q: the clock did not start", c.in)
		}
	}
	// Over two reads: the clock keeps counting lines.
	h := headerClock{limit: time.Minute}
	first := []byte("GET / HTTP/1.1\nHo")
	h.saw(first, len(first))
	second := make([]byte, 16)
	n := h.saw(second, copy(second, "st: a\n\n"))
	if got := string(second[:n]); got != "st: a\r\n\r\n" || !h.done {
		t.Errorf("second read became %q (done %v)", got, h.done)
	}
	if h.deadline() != 0 {
		t.Error("a finished header still bounds reads")
	}
	h.next()
	if h.done || h.started != 0 {
		t.Error("next did not start a new header")
	}
}

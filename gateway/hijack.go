package gateway

import "sync"

// hijacked is a connection fasthttp gave up (ctx.Hijack) to a goroutine
// of the gateway's: a tunnel, a lingering close. end makes that goroutine
// return soon.
type hijacked interface{ end() }

// hijacks tracks the hijacked connections being served, so that Close
// can end them and wait for their goroutines.
type hijacks struct {
	mu     sync.Mutex
	live   map[hijacked]struct{}
	closed bool
	wg     sync.WaitGroup
}

// add registers h, or reports false once closeAll has run.
func (hs *hijacks) add(h hijacked) bool {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if hs.closed {
		return false
	}
	if hs.live == nil {
		hs.live = make(map[hijacked]struct{})
	}
	hs.live[h] = struct{}{}
	hs.wg.Add(1)
	return true
}

func (hs *hijacks) done(h hijacked) {
	hs.mu.Lock()
	delete(hs.live, h)
	hs.mu.Unlock()
	hs.wg.Done()
}

// closeAll ends every hijacked connection, refuses new ones, and waits
// for them.
func (hs *hijacks) closeAll() {
	hs.mu.Lock()
	hs.closed = true
	for h := range hs.live {
		h.end()
	}
	hs.mu.Unlock()
	hs.wg.Wait()
}

// count returns the number of hijacked connections being served.
func (hs *hijacks) count() int {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	return len(hs.live)
}

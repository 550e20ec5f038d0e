package traffic

import (
	"cmp"
	"slices"
	"strings"
	"sync"
)

// The bounds of the unrouted names (Recorder.Unrouted).
const (
	// UnroutedNames is how many names nobody registered the Recorder
	// counts apart; a name asked when as many are counted takes the
	// place of the least asked one, counting from one: the names asked
	// often stay, and a flood of made-up names only replaces itself.
	UnroutedNames = 64
	// MaxUnroutedName is the longest name kept, in bytes; a longer one
	// is cut there.
	MaxUnroutedName = 64
)

// unrouted counts the names asked that no one registered, at most
// UnroutedNames of them. A name that took another's place counts from
// one (the space-saving sketch's newcomer inherits the count it
// replaces, so that a flood of unique names soon outranks a name asked a
// hundred times: not what an operator looks for).
type unrouted struct {
	mu     sync.Mutex
	counts map[string]uint64
}

// Unrouted counts a request for name (upper case), which names no
// registered application: the requests themselves are counted under
// Unknown, and this the names, for the dashboard's "unrouted" line. A
// client that asks for many names moves the least asked ones out, never
// grows what is kept. It takes one short lock (requests for names nobody
// registered are no hot path) and allocates only for a name not counted
// yet.
func (r *Recorder) Unrouted(name string) {
	if r == nil || name == "" {
		return
	}
	if len(name) > MaxUnroutedName {
		name = name[:MaxUnroutedName]
	}
	u := &r.unrouted
	u.mu.Lock()
	defer u.mu.Unlock()
	if _, ok := u.counts[name]; ok {
		u.counts[name]++
		return
	}
	if u.counts == nil {
		u.counts = make(map[string]uint64, UnroutedNames)
	}
	if len(u.counts) >= UnroutedNames {
		least, fewest := "", uint64(0)
		for k, c := range u.counts {
			if least == "" || c < fewest || (c == fewest && k < least) {
				least, fewest = k, c
			}
		}
		delete(u.counts, least)
	}
	u.counts[strings.Clone(name)] = 1 // the caller's may be a reused buffer's
}

// NameCount is a name and how many requests asked for it.
type NameCount struct {
	Name     string
	Requests uint64
}

// UnroutedTop returns the n names nobody registered that were asked most
// since the Recorder was made (the most first, then by name).
func (r *Recorder) UnroutedTop(n int) []NameCount {
	u := &r.unrouted
	u.mu.Lock()
	out := make([]NameCount, 0, len(u.counts))
	for k, c := range u.counts {
		out = append(out, NameCount{k, c})
	}
	u.mu.Unlock()
	slices.SortFunc(out, func(x, y NameCount) int {
		return cmp.Or(cmp.Compare(y.Requests, x.Requests), cmp.Compare(x.Name, y.Name))
	})
	return out[:min(n, len(out))]
}

// Package filewatch holds the hold-still check of a file re-read at
// intervals (routing's RulesFile, cmd/eureka's -peers-file): a change is
// applied once a check finds it as the previous check did, so that a file
// written in place is not applied half written.
package filewatch

// HoldStill keeps the change seen at the last check. Same tells whether
// two sightings are the same file (the contents, or whatever the caller
// compares). The zero value with Same set is ready; it is not safe for
// concurrent use (the one goroutine that checks owns it).
type HoldStill[T any] struct {
	Same    func(a, b T) bool
	pending T
	has     bool // pending holds a change: an empty one is a change too
}

// Held reports whether seen, a change found at this check, is the one
// the previous check found: then it is to be applied, and forgotten.
// Otherwise it is kept for the next check.
func (h *HoldStill[T]) Held(seen T) bool {
	if h.has && h.Same(seen, h.pending) {
		h.Reset()
		return true
	}
	h.pending, h.has = seen, true
	return false
}

// Reset forgets the change kept: the file is back to what is in force,
// gone, or applied another way (at once, on a signal).
func (h *HoldStill[T]) Reset() {
	var zero T
	h.pending, h.has = zero, false
}

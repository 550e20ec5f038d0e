package balancer

import "math/rand/v2"

// Random takes one of an application's usable instances uniformly at
// random. The zero value is ready to use.
type Random struct {
	// Rand is the random source. Default: the math/rand/v2 package's.
	Rand *rand.Rand

	lock lockedRand
}

// Choose returns a usable candidate at random.
func (r *Random) Choose(c Candidates) (int, bool) {
	usable := 0
	for i := range c.Len() {
		if c.Usable(i) {
			usable++
		}
	}
	if usable == 0 {
		return -1, false
	}
	k := r.lock.intN(r.Rand, usable)
	for i := range c.Len() {
		if c.Usable(i) {
			if k == 0 {
				return i, true
			}
			k--
		}
	}
	return -1, false
}

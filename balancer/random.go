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
	return chooseByWeight(c, &r.lock, r.Rand, func(int) int { return 1 })
}

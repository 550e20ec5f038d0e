package balancer

import (
	"math/rand/v2"
	"strconv"

	"github.com/eurekagate/eurekagate/eureka"
)

// Weighted takes one of an application's usable instances at random, in
// proportion to its "weight" metadata: a positive integer, 1 when absent
// or invalid, and 1 for candidates without instance data. The zero value
// is ready to use.
type Weighted struct {
	// Rand is the random source. Default: the math/rand/v2 package's.
	Rand *rand.Rand

	lock lockedRand
}

// Choose returns a usable candidate at random by weight.
func (w *Weighted) Choose(c Candidates) (int, bool) {
	return chooseByWeight(c, &w.lock, w.Rand, func(i int) int { return weight(c.Instance(i)) })
}

// chooseByWeight returns a usable candidate at random, each in proportion
// to its positive weight, drawing from src through l.
func chooseByWeight(c Candidates, l *lockedRand, src *rand.Rand, weight func(i int) int) (int, bool) {
	total := 0
	for i := range c.Len() {
		if c.Usable(i) {
			total += weight(i)
		}
	}
	if total == 0 {
		return -1, false
	}
	r := l.intN(src, total)
	last := -1
	for i := range c.Len() {
		if !c.Usable(i) {
			continue
		}
		last = i
		if r -= weight(i); r < 0 {
			return i, true
		}
	}
	return last, last >= 0
}

func weight(i *eureka.InstanceInfo) int {
	if i == nil {
		return 1
	}
	if w, err := strconv.Atoi(i.Metadata["weight"]); err == nil && w > 0 {
		return w
	}
	return 1
}

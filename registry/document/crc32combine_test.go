package document

import (
	"hash/crc32"
	"math/rand/v2"
	"testing"
)

func TestCRC32Combine(t *testing.T) {
	rnd := rand.New(rand.NewPCG(3, 4))
	for _, sizes := range [][2]int{{0, 0}, {0, 5}, {5, 0}, {1, 1}, {100, 3000}, {70000, 123457}} {
		a, b := make([]byte, sizes[0]), make([]byte, sizes[1])
		for n := range a {
			a[n] = byte(rnd.IntN(256))
		}
		for n := range b {
			b[n] = byte(rnd.IntN(256))
		}
		whole := crc32.ChecksumIEEE(append(append([]byte{}, a...), b...))
		if got := crc32Combine(crc32.ChecksumIEEE(a), crc32.ChecksumIEEE(b), len(b)); got != whole {
			t.Errorf("sizes %v: combined %08x, whole %08x", sizes, got, whole)
		}
	}
}

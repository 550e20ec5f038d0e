package document

// crc32Combine returns the CRC-32 (IEEE) of a+b from crcA = CRC(a),
// crcB = CRC(b) and len(b), as zlib's crc32_combine does, so the gzip
// trailer of a document assembled from pieces costs a few operations per
// piece instead of a pass over the whole document. The CRC of a message
// followed by n zero bytes is a linear map of its CRC; zeroShift holds that
// map for n = 2^k as 32x32 matrices over GF(2), so a shift by len(b) is one
// matrix-vector product per set bit of len(b).
func crc32Combine(crcA, crcB uint32, lenB int) uint32 {
	for k := 0; lenB > 0; k, lenB = k+1, lenB>>1 {
		if lenB&1 != 0 {
			crcA = gf2Times(&zeroShift[k], crcA)
		}
	}
	return crcA ^ crcB
}

// zeroShift[k] appends 2^k zero bytes to a message, acting on its CRC.
var zeroShift = func() (t [64][32]uint32) {
	var bit [32]uint32 // one zero bit
	bit[0] = 0xedb88320
	for n := 1; n < 32; n++ {
		bit[n] = 1 << (n - 1)
	}
	m := bit
	for range 3 { // 1, 2, 4, 8 bits: one byte
		m = gf2Square(&m)
	}
	for k := range t {
		t[k] = m
		m = gf2Square(&m)
	}
	return t
}()

func gf2Times(m *[32]uint32, v uint32) uint32 {
	var sum uint32
	for n := 0; v != 0; n, v = n+1, v>>1 {
		if v&1 != 0 {
			sum ^= m[n]
		}
	}
	return sum
}

func gf2Square(m *[32]uint32) (sq [32]uint32) {
	for n := range sq {
		sq[n] = gf2Times(m, m[n])
	}
	return sq
}

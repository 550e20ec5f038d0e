package document

import "hash/crc32"

// assembly is what a payload is assembled from: head, entries separated
// by sep, tail. An entry is given by two functions: plain appends its
// plain parts, deflated its deflate pieces and returns their CRC-32 and
// plain length.
type assembly struct {
	head, tail, sep []byte
	entries         int
	parts           int // how many parts (plain, or deflated if more) the entries have in all, if more than one each
	plain           func(dst [][]byte, k int) [][]byte
	deflated        func(dst [][]byte, k int) ([][]byte, uint32, int)
}

// payload assembles d at version: plain with its gzip form made on
// first use from the entries' deflate pieces, or compressed only.
func (d *assembly) payload(version uint64, built int64, plain bool) *Payload {
	if !plain {
		z, crc, total := d.gzipped()
		return newCompressedPayload(version, built, total, crc, z)
	}
	parts := make([][]byte, 0, max(d.parts, 2*d.entries+2))
	parts = append(parts, d.head)
	for k := range d.entries {
		if k > 0 && len(d.sep) > 0 {
			parts = append(parts, d.sep)
		}
		parts = d.plain(parts, k)
	}
	parts = append(parts, d.tail)
	p := New(version, built, parts...)
	p.gzip = func() [][]byte {
		z, crc, _ := d.gzipped()
		return gzipMember(crc, p.Len(), z...)
	}
	return p
}

// gzipped returns d's deflate pieces, final block included, with the
// CRC-32 and length of its plain bytes.
func (d *assembly) gzipped() ([][]byte, uint32, int) {
	z := make([][]byte, 0, max(d.parts, 2*d.entries)+3)
	z = append(z, deflate(d.head, false))
	crc, total := crc32.ChecksumIEEE(d.head), len(d.head)
	sepCRC := crc32.ChecksumIEEE(d.sep)
	for k := range d.entries {
		if k > 0 && len(d.sep) > 0 {
			z = append(z, deflatedSeparator)
			crc, total = crc32Combine(crc, sepCRC, len(d.sep)), total+len(d.sep)
		}
		var c uint32
		var n int
		z, c, n = d.deflated(z, k)
		crc, total = crc32Combine(crc, c, n), total+n
	}
	z = append(z, deflate(d.tail, false), finalBlock)
	crc = crc32Combine(crc, crc32.ChecksumIEEE(d.tail), len(d.tail))
	return z, crc, total + len(d.tail)
}

// deflatedSeparator is the JSON separator as a deflate piece.
var deflatedSeparator = deflate([]byte{','}, false)

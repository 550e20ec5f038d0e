package document

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"io"
	"sync"

	kflate "github.com/klauspost/compress/flate"
)

// A gzip member is a header, a deflate stream and a trailer with the CRC-32
// and size of the uncompressed data. A deflate stream may be made of
// pieces compressed separately, as long as every piece but the last ends
// with a flush (byte-aligned, not final) and none refers back into another:
// a fresh compressor per piece guarantees both. So each application's piece
// of the full registry is compressed once, when it is built, and the gzip
// form of the whole registry is those pieces with a new head and trailer,
// the way pigz compresses in parallel. Decoders see one ordinary stream.

var gzipHeader = []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff}

// Pieces are compressed by klauspost/compress at its level 5: as fast as
// the standard library's BestSpeed and a quarter smaller (the full
// registry of 10,000 Spring-shaped instances in pieces of 100 KB: 591 KB
// against 776 KB, where one stream at the standard library's default
// level, as Java's server sends it, is 525 KB), with a compressor whose
// Reset clears no tables, which matters when the pieces are many and
// small. Its output is ordinary deflate; the readers stay the standard
// library's.
const deflateLevel = 5

var deflaters = sync.Pool{New: func() any {
	w, _ := kflate.NewWriter(nil, deflateLevel)
	return w
}}

// deflate compresses data as a piece of a deflate stream: flushed, and
// final only if last.
func deflate(data []byte, last bool) []byte {
	var buf bytes.Buffer
	buf.Grow(len(data)/6 + 64)
	w := deflaters.Get().(*kflate.Writer)
	w.Reset(&buf)
	w.Write(data)
	if last {
		w.Close()
	} else {
		w.Flush()
	}
	deflaters.Put(w)
	if b := buf.Bytes(); cap(b) > 2*len(b)+4096 {
		// Registry documents compress far better than the room made for
		// them: a piece kept for minutes should not keep that room.
		return bytes.Clone(b)
	}
	return buf.Bytes()
}

// finalBlock is an empty final deflate block, to end a stream of flushed
// pieces.
var finalBlock = deflate(nil, true)

// gzipMember wraps compressed pieces in a gzip header and a trailer
// that carries crc and size, the CRC-32 and length of the uncompressed
// bytes. The last piece must be final.
func gzipMember(crc uint32, size int, pieces ...[]byte) [][]byte {
	trailer := binary.LittleEndian.AppendUint32(nil, crc)
	trailer = binary.LittleEndian.AppendUint32(trailer, uint32(size))
	out := make([][]byte, 0, len(pieces)+2)
	out = append(out, gzipHeader)
	out = append(out, pieces...)
	return append(out, trailer)
}

// inflaters are decompressors to reuse: each holds a 32 KiB window.
var inflaters sync.Pool

// inflatePiece returns the n plain bytes of a flushed deflate piece.
func inflatePiece(z []byte, n int) []byte {
	out := make([]byte, n)
	src := io.MultiReader(bytes.NewReader(z), bytes.NewReader(finalBlock))
	r, _ := inflaters.Get().(io.ReadCloser)
	if r == nil {
		r = flate.NewReader(src)
	} else {
		r.(flate.Resetter).Reset(src, nil)
	}
	io.ReadFull(r, out)
	inflaters.Put(r)
	return out
}

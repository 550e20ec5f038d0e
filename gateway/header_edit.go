package gateway

import (
	"bytes"
	"iter"

	"github.com/valyala/fasthttp"
)

// headerFields is what removeFields needs of a fasthttp request or
// response header.
type headerFields interface {
	All() iter.Seq2[[]byte, []byte]
	DelBytes(key []byte)
	AddBytesKV(key, value []byte)
}

// Headers that fasthttp keeps apart from the other fields (in fields of
// their own, or parsed), which removeFields leaves alone: the callers
// remove those they must with DelBytes.
var (
	requestSpecial = [...][]byte{[]byte("Host"), []byte("Content-Type"), []byte("Content-Length"), []byte("User-Agent"),
		[]byte("Cookie"), []byte("Connection"), []byte("Transfer-Encoding"), []byte("Trailer")}
	responseSpecial = [...][]byte{[]byte("Content-Type"), []byte("Content-Length"), []byte("Content-Encoding"), []byte("Server"),
		[]byte("Set-Cookie"), []byte("Connection"), []byte("Transfer-Encoding"), []byte("Trailer")}
)

func isAny(k []byte, names [][]byte) bool {
	for _, n := range names {
		if len(n) == len(k) && bytes.EqualFold(n, k) {
			return true
		}
	}
	return false
}

// removeFields removes every field of h whose name drop selects, and
// keeps the others in their order. fasthttp's DelBytes moves the last
// field into the place of the one it deletes, which reorders repeated
// fields, whose order RFC 9110 section 5.3 makes significant; so the
// fields are read, all removed, and the kept ones added back in order.
// It allocates, for the requests that need it: those with headers to
// drop.
func removeFields(h headerFields, special [][]byte, drop func(k []byte) bool) {
	type field struct{ k, v []byte }
	var kept []field
	var names [][]byte
	dropped := false
	for k, v := range h.All() {
		if isAny(k, special) {
			continue
		}
		if drop(k) {
			dropped = true
		} else {
			kept = append(kept, field{append([]byte(nil), k...), append([]byte(nil), v...)})
		}
		if !isAny(k, names) {
			names = append(names, append([]byte(nil), k...))
		}
	}
	if !dropped {
		return
	}
	for _, k := range names {
		h.DelBytes(k)
	}
	for _, f := range kept {
		h.AddBytesKV(f.k, f.v)
	}
}

var (
	_ headerFields = (*fasthttp.RequestHeader)(nil)
	_ headerFields = (*fasthttp.ResponseHeader)(nil)
)

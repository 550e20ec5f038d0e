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
// remove those they must with DelBytes, which moves no other field.
var (
	requestSpecial = [...][]byte{[]byte("Host"), []byte("Content-Type"), []byte("Content-Length"), []byte("User-Agent"),
		[]byte("Cookie"), []byte("Transfer-Encoding"), []byte("Trailer")}
	responseSpecial = [...][]byte{[]byte("Content-Type"), []byte("Content-Length"), []byte("Content-Encoding"), []byte("Server"),
		[]byte("Set-Cookie"), []byte("Transfer-Encoding"), []byte("Trailer"), []byte("Date")}
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
// fields, whose order RFC 9110 section 5.3 makes significant: when a
// name repeats, the fields are read, all removed, and the kept ones added
// back in order (which allocates); when none does, DelBytes reorders
// nothing that matters.
func removeFields(h headerFields, special [][]byte, drop func(k []byte) bool) {
	var seen [32][]byte
	n, repeats, dropped := 0, false, false
	var names [256]byte
	dropNames := names[:0]
	for k := range h.All() {
		if isAny(k, special) {
			continue
		}
		if drop(k) {
			dropped = true
			dropNames = append(append(dropNames, k...), 0)
		}
		switch {
		case repeats:
		case n == len(seen):
			repeats = true // too many to tell: take the safe way
		case isAny(k, seen[:n]):
			repeats = true
		default:
			seen[n] = k
			n++
		}
	}
	if !dropped {
		return
	}
	if !repeats {
		for len(dropNames) > 0 {
			i := bytes.IndexByte(dropNames, 0)
			h.DelBytes(dropNames[:i])
			dropNames = dropNames[i+1:]
		}
		return
	}
	type field struct{ k, v []byte }
	var kept []field
	var all [][]byte
	for k, v := range h.All() {
		if isAny(k, special) {
			continue
		}
		if !drop(k) {
			kept = append(kept, field{append([]byte(nil), k...), append([]byte(nil), v...)})
		}
		if !isAny(k, all) {
			all = append(all, append([]byte(nil), k...))
		}
	}
	for _, k := range all {
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

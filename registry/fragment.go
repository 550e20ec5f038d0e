package registry

import (
	"cmp"
	"slices"
	"strings"

	"github.com/eurekagate/eurekagate/eureka"
)

// fragment is one application's entry in the full registry, in one
// format: its parts (the entry's head and the instances of its first
// encoding, then a run of the instances registered since each later
// build, led by a separator) and the format's entry tail. It is not
// modified once made.
//
// Why runs: while a mass registration goes on every application changes
// at every build, and encoding each again whole made the first read after
// it seconds of work on every node of a cluster. A build that finds an
// application only added to since its fragment (appLeases.rewritten)
// encodes the new instances alone; any other change, or maxFragmentParts
// runs, encodes it whole again.
type fragment struct {
	version uint64 // the app's version it renders
	built   int64  // ms, when its first part was: it ages out whole
	counts  eureka.StatusCounts
	parts   []*piece
	n       int // plain bytes, the tail's included
	tail    *piece
}

// maxFragmentParts bounds an application's runs: each is compressed
// apart, so many small ones compress worse than one.
const maxFragmentParts = 32

// entryTails are the formats' entry tails, kept plain and deflated.
var entryTails = func() (t [2]*piece) {
	for _, f := range []eureka.Format{eureka.FormatJSON, eureka.FormatXML} {
		t[f] = newPiece(eureka.AppendEntryTail(nil, f), false)
		t[f].deflated()
	}
	return t
}()

// kept returns fr in the form a document keeps (piece.kept).
func (fr *fragment) kept(plain bool) *fragment {
	var out *fragment
	for k, p := range fr.parts {
		if q := p.kept(plain); q != p {
			if out == nil {
				c := *fr
				c.parts = slices.Clone(fr.parts)
				out = &c
			}
			out.parts[k] = q
		}
	}
	if out == nil {
		return fr
	}
	return out
}

// plain appends fr's plain parts to dst.
func (fr *fragment) plain(dst [][]byte) [][]byte {
	for _, p := range fr.parts {
		dst = append(dst, p.plain())
	}
	return append(dst, fr.tail.body)
}

// deflated appends fr's deflate pieces to dst, and returns the CRC-32
// and length of their plain bytes.
func (fr *fragment) deflated(dst [][]byte) ([][]byte, uint32, int) {
	var crc uint32
	n := 0
	for _, p := range fr.parts {
		dst = append(dst, p.deflated())
		crc, n = crc32Combine(crc, p.crc, p.n), n+p.n
	}
	dst = append(dst, fr.tail.deflated())
	return dst, crc32Combine(crc, fr.tail.crc, fr.tail.n), n + fr.tail.n
}

// staleApp is an application whose piece must be encoded again, with
// what the build copied of its leases under the lock: each holder (never
// modified) and its lease's timestamps, not a copy of each instance, so
// that a build at a million instances copies tens of megabytes, not
// hundreds. With base, the leases are those added since base, which it
// extends.
type staleApp struct {
	name    string
	version uint64
	leases  []leaseView
	base    *fragment
}

// leaseView is a lease as a read renders it: its holder and timestamps.
type leaseView struct {
	id    string
	added uint64
	info  *eureka.InstanceInfo
	lease eureka.LeaseInfo
}

// encodeFragment encodes one application's entry in scratch, or the run
// of instances that extends st.base, and keeps it plain, or compressed
// only.
func (s *Store) encodeFragment(f eureka.Format, st staleApp, now int64, compress bool, scratch *[]byte) *fragment {
	fr := &fragment{version: st.version, built: now, tail: entryTails[f]}
	var b []byte
	if st.base != nil {
		// In the order they came, as the delta has them.
		slices.SortFunc(st.leases, func(a, b leaseView) int { return cmp.Compare(a.added, b.added) })
		fr.built, fr.counts, fr.parts = st.base.built, st.base.counts, slices.Clip(st.base.parts)
		b = append((*scratch)[:0], eureka.InstanceSeparator(f)...)
	} else {
		slices.SortFunc(st.leases, func(a, b leaseView) int { return strings.Compare(a.id, b.id) })
		b = eureka.AppendEntryHead((*scratch)[:0], f, st.name)
	}
	sep := eureka.InstanceSeparator(f)
	var inst eureka.InstanceInfo
	for k, lv := range st.leases {
		if k > 0 {
			b = append(b, sep...)
		}
		inst = *lv.info
		inst.LeaseInfo = lv.lease
		inst.IsCoordinatingDiscoveryServer = s.cfg.InstanceID != "" && lv.id == s.cfg.InstanceID
		b = eureka.AppendEntryInstance(b, f, &inst)
		fr.counts.Add(inst.Status)
	}
	*scratch = b
	if !compress {
		b = slices.Clone(b)
	}
	fr.parts = append(fr.parts, newPiece(b, compress))
	fr.n = fr.tail.n
	for _, p := range fr.parts {
		fr.n += p.n
	}
	return fr
}

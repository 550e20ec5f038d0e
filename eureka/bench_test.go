package eureka

import (
	"strconv"
	"testing"
	"time"
)

var benchSizes = []int{10000, 100000}

// forEachRegistry calls bench for each size of benchRegistry and each
// format, with the registry, its document and a name such as "JSON/10000".
func forEachRegistry(bench func(name string, f Format, apps *Applications, doc []byte)) {
	for _, n := range benchSizes {
		apps := benchRegistry(n)
		for _, f := range []Format{FormatJSON, FormatXML} {
			name := map[Format]string{FormatJSON: "JSON", FormatXML: "XML"}[f]
			bench(name+"/"+strconv.Itoa(n), f, apps, AppendApplications(nil, f, apps))
		}
	}
}

func BenchmarkRegistry(b *testing.B) {
	forEachRegistry(func(name string, f Format, apps *Applications, doc []byte) {
		b.Run("Encode"+name, func(b *testing.B) {
			b.SetBytes(int64(len(doc)))
			b.ReportAllocs()
			buf := make([]byte, 0, len(doc))
			for b.Loop() {
				buf = AppendApplications(buf[:0], f, apps)
			}
		})
		b.Run("Decode"+name, func(b *testing.B) {
			b.SetBytes(int64(len(doc)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := DecodeApplications(f, doc); err != nil {
					b.Fatal(err)
				}
			}
		})
	})
}

// BenchmarkDecodeEncodeRatio alternates encoding and decoding the same
// registry and reports the ratio of the fastest decode to the fastest
// encode: alternating, both see the same load on a shared machine.
func BenchmarkDecodeEncodeRatio(b *testing.B) {
	forEachRegistry(func(name string, f Format, apps *Applications, doc []byte) {
		b.Run(name, func(b *testing.B) {
			var enc, dec time.Duration
			buf := make([]byte, 0, len(doc))
			for b.Loop() {
				start := time.Now()
				buf = AppendApplications(buf[:0], f, apps)
				if d := time.Since(start); enc == 0 || d < enc {
					enc = d
				}
				start = time.Now()
				if _, err := DecodeApplications(f, doc); err != nil {
					b.Fatal(err)
				}
				if d := time.Since(start); dec == 0 || d < dec {
					dec = d
				}
			}
			b.ReportMetric(float64(enc)/1e6, "enc-ms")
			b.ReportMetric(float64(dec)/1e6, "dec-ms")
			b.ReportMetric(float64(dec)/float64(enc), "dec/enc")
		})
	})
}

package registry

import (
	"bytes"
	"compress/gzip"
	"io"
	"slices"
	"strconv"
	"testing"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/registry/document"
	"github.com/eurekagate/eurekagate/registry/internal/deltacut"
)

// instancesOf decodes a full registry, plain or gzip, into each app's
// instances as JSON, sorted, so that documents whose instances come in
// another order compare equal.
func instancesOf(t *testing.T, doc []byte) map[string][]string {
	t.Helper()
	if len(doc) > 1 && doc[0] == 0x1f && doc[1] == 0x8b {
		zr, err := gzip.NewReader(bytes.NewReader(doc))
		if err != nil {
			t.Fatal(err)
		}
		if doc, err = io.ReadAll(zr); err != nil {
			t.Fatalf("the gzip form does not read whole: %v", err)
		}
	}
	apps, err := eureka.DecodeApplicationsJSON(doc)
	if err != nil {
		t.Fatalf("%v: %s", err, doc)
	}
	out := map[string][]string{}
	for _, a := range apps.Applications {
		for _, i := range a.Instances {
			out[a.Name] = append(out[a.Name], string(eureka.AppendInstanceJSON(nil, i)))
		}
		slices.Sort(out[a.Name])
	}
	return out
}

// wholeFull builds the full registry from no fragment at all.
func wholeFull(s *Store, f eureka.Format) *document.Payload {
	s.payloads.fulls[f] = document.NewFull(f)
	s.payloads.full[f].Store(nil)
	return s.Documents().Full(f)
}

// A full registry whose applications were only added to since the last
// build encodes the new instances alone, and reads as the registry built
// whole, plain and gzip; any other change, and an app gone and back,
// encodes its application whole again.
func TestFullRegistryExtendsApplicationsAddedTo(t *testing.T) {
	defer func(n int) { deltacut.FlattenFrom = n }(deltacut.FlattenFrom)
	deltacut.FlattenFrom = 1 // each extension kept compressed made one run
	for _, plain := range []bool{false, true} {
		s, _ := newTestStore(t, Config{})
		s.payloads.plainReads[eureka.FormatJSON].Store(plain)
		f := eureka.FormatJSON
		same := func(when string) {
			t.Helper()
			got := s.Documents().Full(f)
			gotPlain, gotGzip := instancesOf(t, got.Bytes()), instancesOf(t, got.Gzip().Bytes())
			saved := s.payloads.fulls[f]
			want := instancesOf(t, wholeFull(s, f).Bytes())
			s.payloads.fulls[f] = saved
			s.payloads.plainReads[f].Store(plain) // as before these plain reads
			for name, w := range want {
				if !slices.Equal(gotPlain[name], w) || !slices.Equal(gotGzip[name], w) {
					t.Fatalf("plain %v, %s: app %s reads\n%v\n(gzip %v)\nnot as built whole:\n%v", plain, when, name, gotPlain[name], gotGzip[name], w)
				}
			}
			if len(gotPlain) != len(want) || len(gotGzip) != len(want) {
				t.Fatalf("plain %v, %s: %d apps (%d gzip), built whole %d", plain, when, len(gotPlain), len(gotGzip), len(want))
			}
		}
		parts := func(app string) int { e, _ := s.payloads.fulls[f].Entry(app); return e.Runs }
		for n := range 30 {
			mustRegister(t, s, inst("APP"+strconv.Itoa(n%3), "i"+strconv.Itoa(n)), false)
		}
		same("the first build")
		for n := 30; n < 60; n++ {
			mustRegister(t, s, inst("APP"+strconv.Itoa(n%3), "i"+strconv.Itoa(n)), false)
		}
		encodes := s.payloads.encodes.Load()
		s.Documents().Full(f)
		encoded := s.payloads.encodes.Load() - encodes
		same("after registrations only")
		if parts("APP0") != 2 || parts("APP1") != 2 {
			t.Fatalf("plain %v: %d and %d parts after an extension, want 2", plain, parts("APP0"), parts("APP1"))
		}
		if encoded != 3 {
			t.Fatalf("plain %v: %d pieces encoded for three apps extended", plain, encoded)
		}

		// A modification, a cancel, an app gone and back: encoded whole.
		if err := s.SetStatus("APP0", "i0", eureka.StatusDown, 0, false); err != nil {
			t.Fatal(err)
		}
		s.Cancel("APP1", "i1", false)
		mustRegister(t, s, inst("APP1", "i61"), false)
		for n := 2; n < 60; n += 3 {
			s.Cancel("APP2", "i"+strconv.Itoa(n), false)
		}
		mustRegister(t, s, inst("APP2", "back"), false)
		same("after a status change, a cancel and an app gone and back")
		for _, app := range []string{"APP0", "APP1", "APP2"} {
			if parts(app) != 1 {
				t.Fatalf("plain %v: %s has %d parts after a change that is no registration, want 1", plain, app, parts(app))
			}
		}
		// Runs are bounded.
		for n := range document.MaxRuns + 3 {
			mustRegister(t, s, inst("APP0", "run"+strconv.Itoa(n)), false)
			same("after run " + strconv.Itoa(n))
		}
		if parts("APP0") > document.MaxRuns {
			t.Fatalf("plain %v: %d parts, at most %d", plain, parts("APP0"), document.MaxRuns)
		}
	}
}

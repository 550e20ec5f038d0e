package document

import (
	"bytes"
	"compress/gzip"
	"io"
	"strconv"
	"testing"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/fixture"
	"github.com/eurekagate/eurekagate/registry/internal/deltacut"
)

// An application extended by runs while its registry is kept compressed
// (after a mass registration) is written as one run of deflated bytes,
// held once, so that no read gathers its runs into its writes; its gzip
// form still reads as the registry built whole.
func TestExtendedFragmentIsOneRun(t *testing.T) {
	const apps, perRun, runs = 4, 200, 5
	compressed := func(int) bool { return false }
	var leases [apps][]Lease
	x := NewFull(eureka.FormatJSON)
	version := uint64(0)
	names := make([]string, apps)
	for k := range apps {
		names[k] = "APP-" + strconv.Itoa(k)
	}
	var doc *Payload
	var docs []*Payload
	inPlace := 0
	for r := range runs {
		var stale []Stale
		for a := range apps {
			var added []Lease
			for range perRun {
				version++
				i := fixture.SampleInstance(int(version))
				i.App = names[a]
				added = append(added, Lease{ID: i.InstanceID, Added: version, Info: i, Lease: i.LeaseInfo})
			}
			leases[a] = append(leases[a], added...)
			if r == 0 {
				stale = append(stale, Stale{Name: names[a], Version: version, Leases: added})
			} else {
				stale = append(stale, Stale{Name: names[a], Version: version, Leases: added, Extend: true})
			}
		}
		before := map[string][]byte{}
		for _, name := range names {
			if fr := x.frags[name]; fr != nil && fr.z != nil {
				before[name] = fr.z
			}
		}
		doc = x.Render(append([]string(nil), names...), stale, version, 1, "", compressed)
		docs = append(docs, doc)
		for name, z := range before {
			if &x.frags[name].z[0] == &z[0] {
				inPlace++
			}
		}
	}
	// Extensions went into the room of the run before (the documents
	// share its bytes), and no document built before reads another's:
	// each gzip form reads whole, its CRC-32 checked, with the instances
	// of its own version.
	for k, d := range docs {
		zr, err := gzip.NewReader(bytes.NewReader(d.Gzip().Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(zr)
		if err != nil {
			t.Fatalf("document %d does not read whole after later extensions: %v", k, err)
		}
		if n, want := bytes.Count(got, []byte(`"instanceId"`)), (k+1)*apps*perRun; n != want {
			t.Fatalf("document %d holds %d instances, want %d", k, n, want)
		}
	}
	if inPlace < apps {
		t.Errorf("%d extensions went into the room of the run before, want one an app at least", inPlace)
	}
	for _, name := range names {
		fr := x.frags[name]
		if len(fr.parts) != runs || fr.z == nil {
			t.Fatalf("%s: %d parts, flattened %v; want %d parts in one run", name, len(fr.parts), fr.z != nil, runs)
		}
		if len(fr.z) < deltacut.FlattenFrom {
			t.Fatalf("%s: %d deflated bytes, under FlattenFrom: the test proves nothing", name, len(fr.z))
		}
		off := 0
		for k, p := range fr.parts { // held in the run, not beside it
			if gz := p.deflated(); &gz[0] != &fr.z[off] {
				t.Fatalf("%s: part %d keeps its deflated bytes apart from the run", name, k)
			}
			off += len(p.deflated())
		}
	}
	// The gzip form: the document's head, then per application its run
	// and the entry's tail, a separator between, then the tail, in a
	// gzip member; it reads as the registry built whole.
	gz := doc.Gzip()
	if want := 2 + 1 + apps*2 + (apps - 1) + 2; len(gz.parts) != want {
		t.Errorf("gzip form in %d parts, want %d", len(gz.parts), want)
	}
	whole := NewFull(eureka.FormatJSON)
	var all []Stale
	for a, name := range names {
		all = append(all, Stale{Name: name, Version: version, Leases: leases[a]})
	}
	want := whole.Render(append([]string(nil), names...), all, version, 1, "", func(int) bool { return true }).Bytes()
	zr, err := gzip.NewReader(bytes.NewReader(gz.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("the gzip form does not read whole: %v", err)
	}
	// Runs keep instances in the order they came, a whole encoding sorts
	// them by id: the same bytes but for the order, so compare lengths
	// and each instance.
	if len(got) != len(want) {
		t.Fatalf("the gzip form reads %d bytes, the registry built whole %d", len(got), len(want))
	}
	for a := range apps {
		for _, l := range leases[a] {
			if !bytes.Contains(got, eureka.AppendEntryInstance(nil, eureka.FormatJSON, l.Info)) {
				t.Fatalf("instance %s missing from the gzip form", l.ID)
			}
		}
	}
}

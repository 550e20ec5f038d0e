package regions

import (
	"fmt"
	"io"
	"runtime"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/registry"
)

// heapInUse is the heap in use after a collection.
func heapInUse() int {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int(m.HeapInuse)
}

// Reads with regions= in JSON and XML, gzipped as most clients read
// them, keep one compressed form of each merged document: the heap grows
// by a small part of their plain size, where it held both documents plain
// and gzipped. A plain read makes the next build keep that format plain,
// as the full registry does.
func TestRegionReadsKeptInOneForm(t *testing.T) {
	s, m, _ := regionStore(t, registry.Config{})
	testkit.MustRegister(t, s, testkit.Inst("LOCAL", "l1"), false)
	remote := make([]*eureka.InstanceInfo, 20_000)
	for n := range remote {
		remote[n] = remoteInst("ORDERS", fmt.Sprintf("o%05d", n), eureka.StatusUp)
	}
	if err := m.Update("eu-west", remoteDoc(map[string][]*eureka.InstanceInfo{"ORDERS": remote}), time.Now()); err != nil {
		t.Fatal(err)
	}
	regions := []string{"eu-west"}
	before := heapInUse()
	var plain int
	for _, f := range []eureka.Format{eureka.FormatJSON, eureka.FormatXML} {
		p := m.Payload(regions, false, f)
		p.Gzip()
		plain += p.Len()
		if !p.Compressed() {
			t.Errorf("%v read with regions, gzipped: kept plain", f)
		}
	}
	grew := heapInUse() - before
	t.Logf("merged documents of %d MB plain; the heap grew by %d MB", plain>>20, grew>>20)
	if grew > plain/4 {
		t.Errorf("the heap grew by %d MB for documents of %d MB plain: more than one compressed form of each", grew>>20, plain>>20)
	}

	m.Payload(regions, false, eureka.FormatJSON).WriteTo(io.Discard) // a plain reader
	if p := m.Payload(regions, false, eureka.FormatJSON); p.Compressed() {
		t.Error("after a plain read, the next read is still of a compressed-only document")
	}
	if got := decodeJSON(t, m.Payload(regions, false, eureka.FormatJSON)); len(got.Applications) != 2 {
		t.Errorf("merged document of %d apps, want LOCAL and ORDERS", len(got.Applications))
	}
}

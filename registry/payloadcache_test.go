package registry

import (
	"bytes"
	"compress/gzip"
	"io"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/testkit"
)

// The full registry assembled from application pieces is byte for byte the
// document written whole, and its gzip form, assembled from compressed
// pieces, decompresses to it; a change re-encodes only its application.
func TestFullPayloadFromPieces(t *testing.T) {
	s, clock := newTestStore(t, Config{})
	for n := range 60 {
		mustRegister(t, s, testkit.SampleInstance(n), false) // 3 apps of 20
	}
	check := func(step string) {
		t.Helper()
		for _, f := range []eureka.Format{eureka.FormatJSON, eureka.FormatXML} {
			p := s.Documents().Full(f)
			whole := eureka.AppendApplications(nil, f, s.Applications())
			if !bytes.Equal(p.Bytes(), whole) {
				t.Fatalf("%s: format %v: assembled payload differs from the whole document", step, f)
			}
			zr, err := gzip.NewReader(bytes.NewReader(p.Gzip().Bytes()))
			if err != nil {
				t.Fatalf("%s: gzip header: %v", step, err)
			}
			plain, err := io.ReadAll(zr)
			if err != nil || !bytes.Equal(plain, whole) {
				t.Fatalf("%s: format %v: gzip form does not decompress to the document: %v", step, f, err)
			}
			var streamed bytes.Buffer
			if _, err := io.Copy(&streamed, p.Reader()); err != nil || !bytes.Equal(streamed.Bytes(), whole) {
				t.Fatalf("%s: Reader gives another document: %v", step, err)
			}
		}
	}
	check("initial")
	encodes := s.payloads.encodes.Load()
	s.SetStatus("SERVICE-1", testkit.SampleInstance(20).InstanceID, eureka.StatusOutOfService, 0, false)
	check("after a status change")
	if got := s.payloads.encodes.Load() - encodes; got != 2 {
		t.Errorf("a change to one app re-encoded %d pieces, want 2 (one per format)", got)
	}
	for n := 40; n < 60; n++ {
		s.Cancel("SERVICE-2", testkit.SampleInstance(n).InstanceID, false)
	}
	check("after an app left")
	if n := s.payloads.fulls[eureka.FormatJSON].Apps(); n != 2 {
		t.Errorf("pieces kept for %d apps, want 2", n)
	}
	// Heartbeats are not changes, but lastRenewalTimestamp may lag by at
	// most PayloadMaxAge.
	clock.Advance(61 * time.Second)
	s.Renew("SERVICE-0", testkit.SampleInstance(0).InstanceID, RenewRequest{})
	builds := s.Documents().Builds()
	check("after PayloadMaxAge")
	if s.Documents().Builds() == builds {
		t.Error("a payload older than PayloadMaxAge was served")
	}
}

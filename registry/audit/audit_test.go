package audit

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// stuck is a writer whose first Write waits for release, telling entered
// when it starts.
type stuck struct {
	bytes.Buffer
	entered, release chan struct{}
	once             bool
}

func (s *stuck) Write(p []byte) (int, error) {
	if !s.once {
		s.once = true
		close(s.entered)
		<-s.release
	}
	return s.Buffer.Write(p)
}

// A writer that does not keep up never holds Record: the events past the
// queue are dropped and counted, and Close writes what was queued.
func TestRecordNeverBlocksAndCountsDrops(t *testing.T) {
	w := &stuck{entered: make(chan struct{}), release: make(chan struct{})}
	l := New(w, nil, 2)
	before := DroppedTotal()
	l.Record(Entry{Account: "a", Action: "cancel", Outcome: "refused", Status: 403})
	<-w.entered // the writer holds the first event: two more fit
	for range 100 {
		l.Record(Entry{Account: "a", Action: "cancel", Outcome: "refused", Status: 403})
	}
	if l.Dropped() != 98 || DroppedTotal()-before != 98 {
		t.Fatalf("dropped %d (process %d) of 100 with a stuck writer, want 98", l.Dropped(), DroppedTotal()-before)
	}
	close(w.release)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if lines := strings.Count(w.String(), "\n"); lines != 3 {
		t.Fatalf("%d lines written, want 3", lines)
	}
	l.Record(Entry{Action: "cancel"})
	if l.Dropped() != 99 {
		t.Error("a record after Close was not counted as dropped")
	}
}

// A file trail is appended to, created 0600, one JSON object a line
// with the time in RFC 3339 (UTC, nanoseconds).
func TestOpenAppends(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	when := time.Date(2026, 1, 2, 3, 4, 5, 6, time.FixedZone("x", 3600))
	for n := range 2 {
		l, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		l.Record(Entry{Time: when, Cert: "orders.example", Source: "127.0.0.2", Action: "register", App: "PAYMENTS", Outcome: "refused", Status: 403 + n})
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
	}
	raw, _ := os.ReadFile(path)
	want := `{"time":"2026-01-02T02:04:05.000000006Z","cert":"orders.example","source":"127.0.0.2","action":"register","app":"PAYMENTS","outcome":"refused","status":403}` + "\n" +
		`{"time":"2026-01-02T02:04:05.000000006Z","cert":"orders.example","source":"127.0.0.2","action":"register","app":"PAYMENTS","outcome":"refused","status":404}` + "\n"
	if string(raw) != want {
		t.Fatalf("got\n%s\nwant\n%s", raw, want)
	}
	var e Entry
	if err := json.Unmarshal([]byte(strings.Split(string(raw), "\n")[0]), &e); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", fi.Mode().Perm())
	}
	if _, err := Open(filepath.Join(t.TempDir(), "missing", "audit.log")); err == nil {
		t.Error("a path in a missing directory opened")
	}
}

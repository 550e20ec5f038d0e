package routing

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/internal/testkit"
)

// The alias bomb is refused at its first alias, the heap grows by less
// than 100 MB meanwhile (with every alias followed, each of its rules
// compiles a regex of some megabytes), and the rules in force stay.
func TestRulesAliasBombRefusedInBoundedMemory(t *testing.T) {
	w := newWatchedFile(t, versionRules("2.0"), time.Time{}) // not started: the test checks
	bomb := testkit.AliasBomb(3, 20)
	growth := testkit.HeapGrowth(func() {
		writeRules(t, w.path, bomb, time.Time{})
		w.f.check()
		w.f.check()
	})
	t.Logf("a %d-byte alias bomb: the heap grew by %.1f MB", len(bomb), float64(growth)/(1<<20))
	if growth > 100<<20 {
		t.Errorf("the heap grew by %d MB", growth>>20)
	}
	refused := w.logs.FilterMessage("traffic rules refused; the rules in force stay").All()
	want := w.path + ":7: apps.A0.rules[1]: a YAML alias (*r) is refused in a rules document: write the value out"
	if len(refused) != 1 || refused[0].ContextMap()["error"] != want {
		t.Errorf("logged %+v, want the refusal %q", refused, want)
	}
	if got := w.defaults(); joined(got) != "version=2.0" {
		t.Errorf("applied %q", got)
	}
	if doc, _ := w.f.Rules().App("ORDERS"); doc.Default != "version=2.0" {
		t.Errorf("the rules in force: %+v", doc)
	}
}

// manyRules is a document of n rules for ORDERS, each about 100 bytes.
func manyRules(n int) string {
	var b strings.Builder
	b.WriteString("apps:\n  ORDERS:\n    rules:\n")
	for i := range n {
		fmt.Fprintf(&b, "      - match: {header: {X-Tenant: tenant-%d}}\n        to: [{select: {version: \"2.1\"}}]\n", i)
	}
	return b.String()
}

// A document past a limit is refused with its line, key and reason, and
// a value a refusal quotes is cut to MaxEcho bytes.
func TestRulesLimitsRefused(t *testing.T) {
	regexRule := func(expr string) string {
		return "      - match: {header: {X-User: {regex: '" + expr + "'}}}\n        to: [{select: {v: \"1\"}}]\n"
	}
	digits := strings.Repeat("9", 100_000)
	for _, c := range []struct {
		name string
		lim  RulesLimits
		doc  string
		want string
	}{
		{"more rules than the default", RulesLimits{}, manyRules(1001),
			"bad.yaml:2004: apps.ORDERS.rules[1000]: is a rule past the limit of 1000 rules in a document"},
		{"more rules than set", RulesLimits{MaxRules: 2}, manyRules(3),
			"bad.yaml:8: apps.ORDERS.rules[2]: is a rule past the limit of 2 rules in a document"},
		{"a larger document than the default", RulesLimits{}, manyRules(3000),
			"bad.yaml:5853: the document is larger than 262144 bytes, the limit on a rules document's size"},
		{"a larger document than set", RulesLimits{MaxBytes: 100}, manyRules(3),
			"bad.yaml:5: the document is larger than 100 bytes, the limit on a rules document's size"},
		{"one huge regex", RulesLimits{}, "apps:\n  ORDERS:\n    rules:\n" + regexRule(testkit.HugeRegex()),
			"bad.yaml:4: apps.ORDERS.rules[0].match.header.X-User.regex: the regular expressions come to about 91000 instructions compiled, past the limit of 10000 in a document"},
		{"regexes past the set size together", RulesLimits{MaxRegexSize: 300}, "apps:\n  ORDERS:\n    rules:\n" + regexRule("[a-z]{1,64}") + regexRule("[a-z]{1,64}") + regexRule("[a-z]{1,64}"),
			"bad.yaml:8: apps.ORDERS.rules[2].match.header.X-User.regex: the regular expressions come to about 381 instructions compiled, past the limit of 300 in a document"},
		{"a huge weight", RulesLimits{}, "apps:\n  ORDERS:\n    rules:\n      - to: [{select: {v: \"1\"}, weight: " + digits + "}]\n",
			`bad.yaml:4: apps.ORDERS.rules[0].to[0].weight: "` + digits[:80] + `…(100000 bytes)" is not a whole number from 0 to 10000`},
		{"a huge key", RulesLimits{MaxEcho: 10}, "apps:\n  ORDERS:\n    " + digits[:1000] + ": x\n",
			`bad.yaml:3: apps.ORDERS.9999999999…(1000 bytes): unknown field "9999999999…(1000 bytes)" (known: breaker, default, fallback, limits, retry_budget, rules)`},
		{"a huge regex error", RulesLimits{MaxEcho: 30}, "apps:\n  ORDERS:\n    rules:\n" + regexRule("("+digits),
			"bad.yaml:4: apps.ORDERS.rules[0].match.header.X-User.regex: error parsing regexp: missing …(100044 bytes)"},
	} {
		_, err := c.lim.Parse("bad.yaml", []byte(c.doc))
		if err == nil || err.Error() != c.want {
			t.Errorf("%s:\n got %.300v\nwant %s", c.name, err, c.want)
		}
	}
	// Within the limits, the same documents parse.
	for _, doc := range []string{manyRules(1000), "apps:\n  ORDERS:\n    rules:\n" + regexRule("[a-z0-9._-]{1,64}@example\\.com")} {
		if _, err := ParseRules("ok.yaml", []byte(doc)); err != nil {
			t.Errorf("refused within the limits: %v", err)
		}
	}
	if _, err := (RulesLimits{MaxBytes: 1 << 20, MaxRules: 3000}).Parse("ok.yaml", []byte(manyRules(3000))); err != nil {
		t.Errorf("refused within limits set higher: %v", err)
	}
}

// A rules file past a limit of its RulesFileConfig is refused, and the
// rules in force stay; LoadRules reads no more of a file than the limit
// and one byte.
func TestRulesFileLimits(t *testing.T) {
	w := newWatchedFile(t, versionRules("2.0"), time.Time{})
	w.f.cfg.Limits = RulesLimits{MaxRules: 2}
	writeRules(t, w.path, manyRules(3), time.Time{})
	w.f.check()
	w.f.check()
	refused := w.logs.FilterMessage("traffic rules refused; the rules in force stay").All()
	if want := w.path + ":8: apps.ORDERS.rules[2]: is a rule past the limit of 2 rules in a document"; len(refused) != 1 || refused[0].ContextMap()["error"] != want {
		t.Errorf("logged %+v, want %q", refused, want)
	}
	if got := w.defaults(); joined(got) != "version=2.0" {
		t.Errorf("applied %q", got)
	}
	data, err := RulesLimits{MaxBytes: 10}.read(w.path)
	if err != nil || string(data) != manyRules(3)[:11] {
		t.Errorf("read %q, %v", data, err)
	}
}

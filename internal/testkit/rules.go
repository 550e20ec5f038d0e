package testkit

import (
	"fmt"
	"strings"
)

// HugeRegex is one regular expression of 91,000 instructions compiled,
// in 1.4 KB: issue 44's.
func HugeRegex() string {
	alts := make([]string, 300)
	for i := range alts {
		alts[i] = fmt.Sprintf("x%d", i)
	}
	return "(?:" + strings.Join(alts, "|") + "){1000}"
}

// AliasBomb is issue 44's traffic rules document, scaled: app A0 holds
// a rule with HugeRegex and repeats it by alias (*r, line 7 the first),
// rules times in all, and each of the other apps is A0 by alias. A
// parser that follows the aliases compiles the regex apps × rules times.
func AliasBomb(apps, rules int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "apps:\n  A0: &app\n    rules:\n      - &r\n        match: {header: {X-A: {regex: '%s'}}}\n        to: [{select: {v: \"1\"}}]\n", HugeRegex())
	for range rules - 1 {
		b.WriteString("      - *r\n")
	}
	for i := 1; i < apps; i++ {
		fmt.Fprintf(&b, "  A%d: *app\n", i)
	}
	return b.String()
}

package main

import (
	"fmt"
	"io"
)

// studyTargets are the gateway study's targets its own ratio lines read,
// apart from the anchors' comparisons (gateway_anchors.go).
type studyTargets struct {
	direct, nginx, fast, ruled, quiet, logged, limited, caddyGW, caddyStatic, bare, only *target
	shared                                                                               *target // nil without redis-server
}

// studyRatio is one of the study's ratio lines: a's rate over b's, with
// the study's target for it ("" for none), and whether the ranges over
// the rounds show it.
type studyRatio struct {
	label  string
	a, b   *target
	target string
	ranged bool
}

// ratios are the study's ratio lines, the nginx ones only when nginx
// runs, the shared limit's only when redis-server does.
func (t studyTargets) ratios() []studyRatio {
	var rs []studyRatio
	if t.nginx != nil {
		rs = append(rs,
			studyRatio{"gateway / nginx", t.fast, t.nginx, "0.90", true},
			studyRatio{"bare fasthttp proxy / nginx", t.bare, t.nginx, "", true},
			studyRatio{"gateway without loops / nginx", t.only, t.nginx, "", true})
	}
	rs = append(rs,
		studyRatio{"gateway / Caddy", t.fast, t.caddyGW, "4", true},
		studyRatio{"Caddy eureka_gateway / static", t.caddyGW, t.caddyStatic, "0.90", true},
		studyRatio{"gateway / direct", t.fast, t.direct, "", false},
		studyRatio{"gateway, 20 rules / no rules", t.ruled, t.fast, "0.90", true},
		studyRatio{"gateway / no metrics, no ids", t.fast, t.quiet, "0.95", true},
		studyRatio{"gateway, access log / without", t.logged, t.fast, "0.85", true},
		studyRatio{"gateway, a limit / without", t.limited, t.fast, "0.95", true})
	if t.shared != nil {
		rs = append(rs, studyRatio{"gateway, shared limit / without", t.shared, t.fast, "0.70", true})
	}
	return rs
}

// printStudyRound prints the study's ratios of a round, last giving a
// target's rate in it.
func printStudyRound(out io.Writer, last func(*target) float64, t studyTargets) {
	for _, r := range t.ratios() {
		if r.target == "" {
			fmt.Fprintf(out, "  %-32s%9.2f\n", r.label, last(r.a)/last(r.b))
		} else {
			fmt.Fprintf(out, "  %-32s%9.2f   (target >= %s)\n", r.label, last(r.a)/last(r.b), r.target)
		}
	}
}

// printStudyRanges prints the study's ratios' ranges over the rounds,
// ratios giving the lowest and highest of a's rate over b's in a round.
func printStudyRanges(out io.Writer, ratios func(a, b *target) (lo, hi float64), t studyTargets) {
	for _, r := range t.ratios() {
		if r.ranged {
			lo, hi := ratios(r.a, r.b)
			fmt.Fprintf(out, "  %-32s%.2f - %.2f (same round)\n", r.label, lo, hi)
		}
	}
}

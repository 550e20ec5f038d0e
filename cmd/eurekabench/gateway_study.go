package main

import (
	"fmt"
	"io"
)

// studyTargets are the gateway study's targets its own ratio lines read,
// apart from the anchors' comparisons (gateway_anchors.go).
type studyTargets struct {
	direct, nginx, fast, ruled, quiet, logged, limited, caddyGW, caddyStatic, bare, only *target
}

// printStudyRound prints the study's ratios of a round, last giving a
// target's rate in it; the nginx lines only when nginx runs.
func printStudyRound(out io.Writer, last func(*target) float64, t studyTargets) {
	if t.nginx != nil {
		fmt.Fprintf(out, "  gateway / nginx                 %9.2f   (target >= 0.90)\n", last(t.fast)/last(t.nginx))
		fmt.Fprintf(out, "  bare fasthttp proxy / nginx     %9.2f\n", last(t.bare)/last(t.nginx))
		fmt.Fprintf(out, "  gateway without loops / nginx   %9.2f\n", last(t.only)/last(t.nginx))
	}
	fmt.Fprintf(out, "  gateway / Caddy                 %9.2f   (target >= 4)\n", last(t.fast)/last(t.caddyGW))
	fmt.Fprintf(out, "  Caddy eureka_gateway / static   %9.2f   (target >= 0.90)\n", last(t.caddyGW)/last(t.caddyStatic))
	fmt.Fprintf(out, "  gateway / direct                %9.2f\n", last(t.fast)/last(t.direct))
	fmt.Fprintf(out, "  gateway, 20 rules / no rules    %9.2f   (target >= 0.90)\n", last(t.ruled)/last(t.fast))
	fmt.Fprintf(out, "  gateway / no metrics, no ids    %9.2f   (target >= 0.95)\n", last(t.fast)/last(t.quiet))
	fmt.Fprintf(out, "  gateway, access log / without   %9.2f   (target >= 0.85)\n", last(t.logged)/last(t.fast))
	fmt.Fprintf(out, "  gateway, a limit / without      %9.2f   (target >= 0.95)\n", last(t.limited)/last(t.fast))
}

// printStudyRanges prints the study's ratios' ranges over the rounds,
// ratios giving the lowest and highest of a's rate over b's in a round.
func printStudyRanges(out io.Writer, ratios func(a, b *target) (lo, hi float64), t studyTargets) {
	if t.nginx != nil {
		lo, hi := ratios(t.fast, t.nginx)
		fmt.Fprintf(out, "  gateway / nginx                 %.2f - %.2f (same round)\n", lo, hi)
		lo, hi = ratios(t.bare, t.nginx)
		fmt.Fprintf(out, "  bare fasthttp proxy / nginx     %.2f - %.2f (same round)\n", lo, hi)
		lo, hi = ratios(t.only, t.nginx)
		fmt.Fprintf(out, "  gateway without loops / nginx   %.2f - %.2f (same round)\n", lo, hi)
	}
	lo, hi := ratios(t.fast, t.caddyGW)
	fmt.Fprintf(out, "  gateway / Caddy                 %.2f - %.2f (same round)\n", lo, hi)
	lo, hi = ratios(t.caddyGW, t.caddyStatic)
	fmt.Fprintf(out, "  Caddy eureka_gateway / static   %.2f - %.2f (same round)\n", lo, hi)
	lo, hi = ratios(t.ruled, t.fast)
	fmt.Fprintf(out, "  gateway, 20 rules / no rules    %.2f - %.2f (same round)\n", lo, hi)
	lo, hi = ratios(t.fast, t.quiet)
	fmt.Fprintf(out, "  gateway / no metrics, no ids    %.2f - %.2f (same round)\n", lo, hi)
	lo, hi = ratios(t.logged, t.fast)
	fmt.Fprintf(out, "  gateway, access log / without   %.2f - %.2f (same round)\n", lo, hi)
	lo, hi = ratios(t.limited, t.fast)
	fmt.Fprintf(out, "  gateway, a limit / without      %.2f - %.2f (same round)\n", lo, hi)
}

package main

import "fmt"

// millionTable is docs/performance.md's table of a million run (issue
// 31's targets), rendered from its records by eurekabench report.
var millionTable = table{study: "million", rows: []tableRow{
	{
		label: func(f figures) string {
			return fmt.Sprintf("registrations, %s clients", f.count("registrations.conns"))
		},
		cell: func(f figures) string { return f.count("registrations.rate") + " /s" },
	},
	{
		label: func(figures) string { return "heartbeats alone (the documents being built ahead): rate, p99" },
		cell: func(f figures) string {
			return f.count("heartbeats.alone.rate") + " /s, " + f.ms("heartbeats.alone.p99") + " ms"
		},
	},
	{
		label: func(f figures) string {
			return fmt.Sprintf("**%s concurrent first gzip full fetches** (%.1f MB each), all answered in full", f.count("full.readers"), f.get("full.bytes")/1e6)
		},
		cell:   func(f figures) string { return fmt.Sprintf("**%.2f s**", f.get("full.seconds")) },
		target: "≤ 5 s",
	},
	{
		label: func(figures) string {
			return "**delta until the header** (the server's time to answer, its build included, the transfer not): p50 / p99 / max"
		},
		cell: func(f figures) string {
			return f.ms("delta.header.p50") + " / **" + f.ms("delta.header.p99") + "** / " + f.ms("delta.header.max") + " ms"
		},
		target: "p99 < 100 ms",
	},
	{
		label: func(figures) string { return "delta until its last byte: p50 / p99" },
		cell: func(f figures) string {
			return fmt.Sprintf("%.2f / %.2f s", f.get("delta.last_byte.p50")/1e3, f.get("delta.last_byte.p99")/1e3)
		},
	},
	{
		label: func(f figures) string {
			return fmt.Sprintf("deltas answered in the %.0f s (%s asked); the first's size", f.get("delta.seconds"),
				commas(int(f.get("delta.seconds")*f.get("delta.clients"))))
		},
		cell: func(f figures) string {
			return fmt.Sprintf("%s; %.1f MB", f.count("delta.answered"), f.get("delta.first_bytes")/1e6)
		},
	},
	{
		label: func(figures) string {
			return "**heartbeat p99** alone / during the full fetches / the deltas / the last reads / alone again"
		},
		cell: func(f figures) string {
			return f.ms("heartbeats.alone.p99") + " / " + f.ms("heartbeats.full.p99") + " / **" + f.ms("heartbeats.delta.p99") + "** / " +
				f.ms("heartbeats.formats.p99") + " / " + f.ms("heartbeats.quiet.p99") + " ms"
		},
		target: "< 10 ms throughout",
	},
	{
		label: func(figures) string { return "heartbeats over the run: p50 / p99 / max; 404s and failures" },
		cell: func(f figures) string {
			return f.ms("heartbeats.run.p50") + " / " + f.ms("heartbeats.run.p99") + " / " + f.ms("heartbeats.run.max") + " ms; " +
				commas(int(f.get("heartbeats.not_found")+f.get("heartbeats.failed")))
		},
	},
	{
		label: func(figures) string { return "heartbeats during the deltas" },
		cell:  func(f figures) string { return f.count("heartbeats.delta.rate") + " /s" },
	},
	{
		label: func(figures) string { return "**VmHWM** (peak); VmRSS at the end" },
		cell: func(f figures) string {
			return fmt.Sprintf("**%.2f GB**; %.2f GB", f.get("memory.hwm")/1e9, f.get("memory.rss_end")/1e9)
		},
		target: "≤ 4 GB",
	},
	{
		label: func(f figures) string {
			return fmt.Sprintf("server CPU per read, less the heartbeats at their cost alone at the end (%.1f µs): the first full fetch (one build shared by %s) / a delta",
				f.get("heartbeats.cpu_per_beat"), f.count("full.readers"))
		},
		cell: func(f figures) string {
			return fmt.Sprintf("%.0f / %.1f ms", f.get("full.cpu_per_read"), f.get("delta.cpu_per_read"))
		},
	},
	{
		label: func(f figures) string {
			return fmt.Sprintf("last reads: full JSON plain / full XML plain / delta XML plain (%.2f / %.2f / %.2f GB)",
				f.get("read.full JSON plain.bytes")/1e9, f.get("read.full XML plain.bytes")/1e9, f.get("read.delta XML plain.bytes")/1e9)
		},
		cell: func(f figures) string {
			return fmt.Sprintf("%.1f / %.1f / %.1f s", f.get("read.full JSON plain.seconds"), f.get("read.full XML plain.seconds"), f.get("read.delta XML plain.seconds"))
		},
	},
}}

package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// How the studies write their figures.

// all3 is p50 / p99 / max in ms.
func all3(l latencies) string {
	if l.n == 0 {
		return "none"
	}
	return fmt.Sprintf("%.1f / %.1f / %.1f ms", ms(l.p50), ms(l.p99), ms(l.max))
}

// commas writes n with thousands separators: 1,000,000.
func commas(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for k, r := range s {
		if k > 0 && (len(s)-k)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// gb is a size in GB (10^9 bytes).
func gb(b uint64) string { return fmt.Sprintf("%.2f GB", float64(b)/1e9) }

// mbf is a size in MB (10^6 bytes).
func mbf(b int64) string { return fmt.Sprintf("%.1f MB", float64(b)/1e6) }

// loadAverage is the machine's load average over the last minute, from
// /proc/loadavg.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	if f := strings.Fields(string(b)); len(f) > 0 {
		return f[0]
	}
	return "unknown"
}

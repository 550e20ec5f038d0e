// Package leaktest holds the goleak settings shared by the test suites.
package leaktest

import (
	"testing"

	"go.uber.org/goleak"
)

// Ignored are goroutines that fasthttp owns and that we cannot wait for:
// process-wide ones (the Date header ticker, the dialer's address cache
// cleaner) and per-server or per-client cleaners that notice a stop only at
// their next tick.
var Ignored = []goleak.Option{
	goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.updateServerDate.func1"),
	goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.(*workerPool).Start.func2"),
	goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.(*TCPDialer).tcpAddrsClean"),
	goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.(*HostClient).connsCleaner"),
	goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.(*Client).mCleaner"),
}

// VerifyTestMain runs the tests and fails if any other goroutine outlives
// them.
func VerifyTestMain(m *testing.M, extra ...goleak.Option) {
	goleak.VerifyTestMain(m, append(append([]goleak.Option{}, Ignored...), extra...)...)
}

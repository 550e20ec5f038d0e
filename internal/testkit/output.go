package testkit

import "github.com/eurekagate/eurekagate/internal/proc"

// Output collects what a process or a goroutine writes, for the test to
// read while it runs: Write, String and the waits for a line are safe to
// call together. The zero value is ready to use. It is proc.Output.
type Output = proc.Output

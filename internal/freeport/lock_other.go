//go:build !unix

package freeport

import "os"

// lock is a lock that always succeeds where there is no flock(2).
func lock(*os.File) bool { return true }

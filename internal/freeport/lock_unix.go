//go:build unix

package freeport

import (
	"os"
	"syscall"
)

// lock takes f's lock without waiting, and reports whether it did. The
// lock belongs to f's open file: another open of the same file, in this
// process or another, does not get it until f is closed.
func lock(f *os.File) bool {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil
}

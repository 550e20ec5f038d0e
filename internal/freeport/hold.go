package freeport

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
)

// Tests is the range the tests' servers take their ports from
// (testkit.FreePort), shared by every package's tests and held port by
// port (Hold), since packages are tested side by side.
var Tests = Range{10000, 19899}

// Hold returns a port of r free on 127.0.0.1 when looked at, picked at
// random, and held against every other Hold on this machine, in this
// process or another, until release is called or the process ends: a
// lock (flock(2)) on a file named after the port in a directory of the
// user's under the temporary directory. release must stay reachable
// until then: the file's finalizer would close it, and drop the lock. The files stay, empty, one a
// port at most: removing one would let two opens of its name lock two
// different files. Where there is no flock (Windows), nothing holds the
// port but the server that binds it.
func (r Range) Hold() (port int, release func(), err error) {
	dir := filepath.Join(os.TempDir(), "eurekagate-ports-"+strconv.Itoa(os.Getuid()))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return 0, nil, fmt.Errorf("freeport: %w", err)
	}
	width := r.Highest - r.Lowest + 1
	for range 10 * width {
		port := r.Lowest + rand.IntN(width)
		f, err := os.OpenFile(filepath.Join(dir, strconv.Itoa(port)), os.O_CREATE|os.O_RDWR, 0o600)
		if err != nil {
			return 0, nil, fmt.Errorf("freeport: %w", err)
		}
		if !lock(f) {
			f.Close()
			continue
		}
		ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err != nil {
			f.Close()
			continue
		}
		ln.Close()
		return port, func() { f.Close() }, nil
	}
	return 0, nil, errors.New("freeport: no port free and unheld between " + strconv.Itoa(r.Lowest) + " and " + strconv.Itoa(r.Highest))
}

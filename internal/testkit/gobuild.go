package testkit

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/eurekagate/eurekagate/internal/proc"
)

// GoBuilds builds Go commands for a test binary, each once per process,
// into one temporary folder; Remove deletes that folder (from TestMain,
// after the tests).
type GoBuilds struct {
	Prefix string // the temporary folder's name begins with it

	mu   sync.Mutex
	dir  string
	bins map[string]string
}

// Binary returns the command pkg, built with go build run in dir (pkg as
// go build takes it there, e.g. "./cmd/eureka"), the first time it is
// asked for. It fails the test if the build fails.
func (b *GoBuilds) Binary(t testing.TB, dir, pkg string) string {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	key := filepath.Join(dir, pkg)
	if bin, ok := b.bins[key]; ok {
		return bin
	}
	if b.dir == "" {
		d, err := os.MkdirTemp("", b.Prefix)
		if err != nil {
			t.Fatal(err)
		}
		b.dir, b.bins = d, map[string]string{}
	}
	bin := filepath.Join(b.dir, filepath.Base(pkg))
	if err := proc.GoBuild(context.Background(), dir, nil, bin, pkg); err != nil {
		t.Fatal(err)
	}
	b.bins[key] = bin
	return bin
}

// Remove deletes the folder the commands were built into, if any.
func (b *GoBuilds) Remove() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.dir != "" {
		os.RemoveAll(b.dir)
	}
}

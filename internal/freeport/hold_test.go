package freeport

import (
	"bufio"
	"io"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"testing"
)

// A held port is not held again, in this process or another, until it is
// released; every port of a range is held once before Hold fails.
func TestHoldIsExclusive(t *testing.T) {
	r := Range{testRange.Lowest, testRange.Lowest + 1}
	a, releaseA, err := r.Hold()
	if err != nil {
		t.Fatal(err)
	}
	b, releaseB, err := r.Hold()
	if err != nil {
		t.Fatal(err)
	}
	defer releaseB()
	if a == b || a < r.Lowest || a > r.Highest || b < r.Lowest || b > r.Highest {
		t.Fatalf("held %d and %d of %v", a, b, r)
	}
	if c, _, err := r.Hold(); err == nil {
		t.Fatalf("held %d a third time in a range of two", c)
	}
	releaseA()
	c, releaseC, err := r.Hold()
	if err != nil || c != a {
		t.Fatalf("after %d was released: %d, %v", a, c, err)
	}
	releaseC()
}

// A port a server is bound to is never held.
func TestHoldSkipsPortsInUse(t *testing.T) {
	r := Range{testRange.Lowest + 2, testRange.Lowest + 3}
	ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(r.Lowest))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	for range 5 {
		port, release, err := r.Hold()
		if err != nil {
			t.Fatal(err)
		}
		release()
		if port == r.Lowest {
			t.Fatalf("port %d is bound here, and was held", port)
		}
	}
}

// holdChild is set in the child process of TestHoldAcrossProcesses.
const holdChild = "FREEPORT_HOLD_CHILD"

// Another process's hold keeps the port until that process releases it
// or ends.
func TestHoldAcrossProcesses(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no flock")
	}
	r := Range{testRange.Lowest + 4, testRange.Lowest + 4}
	if os.Getenv(holdChild) != "" {
		_, release, err := r.Hold()
		if err != nil {
			t.Fatal(err)
		}
		os.Stdout.WriteString("held\n")
		io.Copy(io.Discard, os.Stdin) // until the parent closes it
		release()
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestHoldAcrossProcesses$")
	cmd.Env = append(os.Environ(), holdChild+"=1")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	if line, err := bufio.NewReader(stdout).ReadString('\n'); line != "held\n" {
		t.Fatalf("the child said %q (%v)", line, err)
	}
	if port, _, err := r.Hold(); err == nil {
		t.Fatalf("held %d while another process holds it", port)
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the child: %v", err)
	}
	port, release, err := r.Hold()
	if err != nil {
		t.Fatalf("after the other process ended: %v", err)
	}
	release()
	if port != r.Lowest {
		t.Fatalf("held %d of %v", port, r)
	}
}

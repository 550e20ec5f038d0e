package main

import (
	"testing"
	"time"
)

// wrk's totals are read with their unit, the socket errors and the
// non-2xx answers; a run without errors has neither line.
func TestParseWrk(t *testing.T) {
	out := []byte(`Running 15s test @ http://127.0.0.1:1/orders/x
  1 threads and 16 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     1.10ms    2.00ms  40.00ms   90.00%
  208176 requests in 15.02s, 30.00MB read
  Socket errors: connect 1, read 2, write 3, timeout 4
  Non-2xx or 3xx responses: 5
Requests/sec:  13860.00
`)
	w, err := parseWrk(out)
	if err != nil || w != (wrkResult{requests: 208176, seconds: 15.02, non2xx: 5, connect: 1, read: 2, write: 3, timeout: 4}) {
		t.Errorf("%+v %v", w, err)
	}
	w, err = parseWrk([]byte("  900 requests in 1.00m, 1MB read\n"))
	if err != nil || w.requests != 900 || w.seconds != 60 || w.socketErrors() != 0 || w.non2xx != 0 {
		t.Errorf("%+v %v", w, err)
	}
	if _, err := parseWrk([]byte("unable to connect to 127.0.0.1:1 Connection refused\n")); err == nil {
		t.Error("no error without a count")
	}
}

// The switches are read from the probe's answers: to eu-west after the
// last us-east-1 answer while cancelled, back after the last eu-west one
// once registered again.
func TestSwitches(t *testing.T) {
	ms := time.Millisecond
	east := func(at time.Duration) probeSample { return probeSample{at: at, region: localRegion, status: 200} }
	west := func(at time.Duration) probeSample {
		return probeSample{at: at, region: remoteRegion, failover: remoteRegion, status: 200}
	}
	samples := []probeSample{
		east(1 * ms), east(99 * ms), // before the cancels (sent at 100, the last answered at 102)
		east(101 * ms), west(103 * ms), east(104 * ms), west(106 * ms), west(150 * ms),
		west(201 * ms), east(203 * ms), west(205 * ms), east(208 * ms), east(300 * ms), // registered again at 200
		{at: 301 * ms}, // no answer
	}
	p := switches(samples, 100*ms, 102*ms, 200*ms)
	want := probeFigures{firstRemote: 1 * ms, allRemote: 4 * ms, firstLocal: 3 * ms, allLocal: 8 * ms,
		answers: 13, remoteAnswers: 5, failed: 1, marked: 5}
	if p != want {
		t.Errorf("got %+v\nwant %+v", p, want)
	}
	if p := switches(samples[:3], 100*ms, 102*ms, 200*ms); p.firstRemote != -1 || p.allRemote != -1 || p.firstLocal != -1 || p.allLocal != -1 {
		t.Errorf("switches seen in answers without any: %+v", p)
	}
}

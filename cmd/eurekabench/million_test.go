package main

import (
	"bytes"
	"compress/gzip"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/eurekagate/eurekagate/eureka"
)

// The counter finds every occurrence, whatever the writes' boundaries.
func TestPatternCounter(t *testing.T) {
	doc := []byte(strings.Repeat(`{"instanceId":"a"},`, 50) + `"instanceId"` + strings.Repeat(`x"instanceId":`, 7))
	want := bytes.Count(doc, jsonInstancePattern)
	for size := 1; size <= len(doc); size++ {
		c := &patternCounter{pat: jsonInstancePattern}
		for off := 0; off < len(doc); off += size {
			c.Write(doc[off:min(len(doc), off+size)])
		}
		if c.n != want {
			t.Fatalf("writes of %d bytes: %d, want %d", size, c.n, want)
		}
	}
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write(doc)
	zw.Close()
	if n, err := countInGzip(z.Bytes(), jsonInstancePattern); err != nil || n != want {
		t.Errorf("countInGzip: %d, %v; want %d", n, err, want)
	}
	if _, err := countInGzip(doc, jsonInstancePattern); err == nil {
		t.Error("countInGzip took a document that is not gzip")
	}
}

func TestParseProcStatus(t *testing.T) {
	text := "Name:\teureka\nVmPeak:\t 9000000 kB\nVmHWM:\t 3500000 kB\nVmRSS:\t 3100000 kB\nThreads:\t9\n"
	rss, hwm := parseProcStatus(text)
	if rss != 3100000*1024 || hwm != 3500000*1024 {
		t.Errorf("rss %d, hwm %d", rss, hwm)
	}
	if rss, hwm := parseProcStatus("Name:\tx\n"); rss != 0 || hwm != 0 {
		t.Errorf("nothing to read: %d, %d", rss, hwm)
	}
}

func TestParseMemStats(t *testing.T) {
	text := "heap profile: 1: 2 [3: 4] @ heap/1048576\n\n# runtime.MemStats\n# Alloc = 10\n# Sys = 900\n# HeapAlloc = 10\n# HeapSys = 800\n# HeapInuse = 20\n# HeapReleased = 300\n# NextGC = 40\n# PauseNs = [1 2 3]\n"
	m := parseMemStats(text)
	if m != (memStats{heapAlloc: 10, heapInuse: 20, heapSys: 800, heapReleased: 300, nextGC: 40, sys: 900}) {
		t.Errorf("%+v", m)
	}
}

func TestCommas(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 1000000: "1,000,000", 12345678: "12,345,678", -4500: "-4,500"} {
		if got := commas(n); got != want {
			t.Errorf("commas(%d) = %q, want %q", n, got, want)
		}
	}
}

// The instances are Spring-shaped, spread over the apps, unique, and the
// heartbeat path is the registered instance's.
func TestMillionInstance(t *testing.T) {
	ids := map[string]bool{}
	for n := range 3000 {
		i := millionInstance(n, 1000)
		if i.App != "SERVICE-"+strconv.Itoa(n%1000) || i.VIPAddress != strings.ToLower(i.App) {
			t.Fatalf("%d: app %q, vip %q", n, i.App, i.VIPAddress)
		}
		if !strings.HasPrefix(i.InstanceID, i.HostName+":"+i.VIPAddress+":") || ids[i.InstanceID] {
			t.Fatalf("%d: instance id %q", n, i.InstanceID)
		}
		ids[i.InstanceID] = true
		if i.Metadata["management.port"] == "" || i.DataCenterInfo.Name != eureka.DataCenterMyOwn || !i.Port.Enabled {
			t.Fatalf("%d: not Spring-shaped: %+v", n, i)
		}
		if got, want := millionPath(n, 1000), "/eureka/apps/"+i.App+"/"+i.InstanceID; got != want {
			t.Fatalf("path %q, want %q", got, want)
		}
	}
}

// The changes go in turn: an override, its removal on the same
// instance, two re-registrations.
func TestBuildChange(t *testing.T) {
	req := fasthttp.AcquireRequest()
	defer fasthttp.ReleaseRequest(req)
	var body []byte
	var paths []string
	for k := range 8 {
		status := buildChange(req, "127.0.0.1:1", k, 1000, 10, &body)
		method, uri := string(req.Header.Method()), string(req.URI().PathOriginal())
		if q := string(req.URI().QueryString()); q != "" {
			uri += "?" + q
		}
		switch k % 4 {
		case 0:
			if method != "PUT" || !strings.HasSuffix(uri, "/status?value=OUT_OF_SERVICE") || status != 200 {
				t.Errorf("%d: %s %s %d", k, method, uri, status)
			}
			paths = append(paths, strings.TrimSuffix(uri, "/status?value=OUT_OF_SERVICE"))
		case 1:
			if method != "DELETE" || uri != paths[len(paths)-1]+"/status?value=UP" || status != 200 {
				t.Errorf("%d: %s %s %d, after %s", k, method, uri, status, paths[len(paths)-1])
			}
		default:
			if method != "POST" || !strings.HasPrefix(uri, "/eureka/apps/SERVICE-") || status != 204 {
				t.Errorf("%d: %s %s %d", k, method, uri, status)
			}
			i, err := eureka.DecodeInstance(eureka.FormatJSON, req.Body())
			if err != nil || i.Metadata["change"] != strconv.Itoa(k) || "/eureka/apps/"+i.App != uri {
				t.Errorf("%d: %v %+v", k, err, i)
			}
		}
	}
}

func TestParseMachineBusy(t *testing.T) {
	// user nice system idle iowait irq softirq steal guest guest_nice
	text := "cpu  100 5 50 9000 70 3 2 1 0 0\ncpu0 50 2 25 4500 35 1 1 0 0 0\n"
	if got, want := parseMachineBusy(text), 161*time.Second/userHZ; got != want {
		t.Errorf("%v, want %v", got, want)
	}
	if got := parseMachineBusy("intr 1 2 3\n"); got != 0 {
		t.Errorf("no cpu line: %v", got)
	}
}

package caddymodule

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/internal/testkit"
)

// An answer in chunks reaches the client with its trailers, and its
// connection is used again; an answer without a length is read until
// the instance closes the connection, and the next request goes on a new
// one (a POST, which would fail on the closed one and not go again).
func TestLeanBodiesChunkedAndToClose(t *testing.T) {
	inst := newScripted(t, func(conn, req int, r *http.Request) (string, bool) {
		if r.URL.Path == "/close" {
			return "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil the end", true
		}
		return "HTTP/1.1 200 OK\r\nTrailer: X-Sum\r\nTransfer-Encoding: chunked\r\n\r\n" +
			"5\r\nhello\r\n6\r\n world\r\n0\r\nX-Sum: 42\r\n\r\n", false
	})
	inst.behind(t, "bodies", "")
	for range 2 {
		status, body, trailer := send(t, "GET", "/bodies/chunked")
		if status != 200 || body != "hello world" || trailer.Get("X-Sum") != "42" {
			t.Fatalf("chunked: %d %q trailer %v", status, body, trailer)
		}
	}
	for _, method := range []string{"GET", "POST"} {
		if status, body, _ := send(t, method, "/bodies/close"); status != 200 || body != "until the end" {
			t.Fatalf("%s to close: %d %q", method, status, body)
		}
	}
	want := []string{"1/1 GET /chunked", "1/2 GET /chunked", "1/3 GET /close", "2/1 POST /close"}
	testkit.Want(t, "what the instance read", inst.seen(), want)
}

// As net/http's Transport: a request without Accept-Encoding (and no
// Range, not a HEAD) asks the instance for gzip, and the client gets the
// answer un-gzipped, of unknown length; a client that asked for gzip
// itself gets the instance's gzip as it came.
func TestLeanGzipAsNetHTTP(t *testing.T) {
	inst := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Asked", r.Header.Get("Accept-Encoding"))
		if r.Header.Get("Accept-Encoding") != "gzip" {
			io.WriteString(w, "plain")
			return
		}
		w.Header().Set("Content-Encoding", "gzip")
		zw := gzip.NewWriter(w)
		io.WriteString(zw, "unzipped")
		zw.Close()
	}))
	t.Cleanup(inst.Close)
	loadConfig(t, gatewayConfig("registry "+newRegistry("gzip"), ""))
	registerVia(t, registryURL, serverBackend("g", inst).instance("zipped"))
	for _, c := range []struct {
		method, header, asked, encoding, body string
		length                                int64
	}{
		{"GET", "", "gzip", "", "unzipped", -1},
		{"GET", "Range: bytes=0-\r\n", "", "", "plain", 5},
		{"HEAD", "", "", "", "", 5},
		{"GET", "Accept-Encoding: gzip\r\n", "gzip", "gzip", "", -2},
	} {
		conn := dialGateway(t)
		io.WriteString(conn, c.method+" /zipped/x HTTP/1.1\r\nHost: gw\r\n"+c.header+"Connection: close\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(conn), &http.Request{Method: c.method})
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		conn.Close()
		got := resp.Header.Get("X-Asked") + " " + resp.Header.Get("Content-Encoding")
		if want := c.asked + " " + c.encoding; got != want {
			t.Errorf("%s %q: asked, encoding %q, want %q", c.method, c.header, got, want)
		}
		if c.length == -2 { // the instance's gzip, untouched
			zr, err := gzip.NewReader(bytes.NewReader(body))
			if err != nil {
				t.Fatalf("%s %q: %v", c.method, c.header, err)
			}
			body, _ = io.ReadAll(zr)
			c.body, c.length = "unzipped", resp.ContentLength
		}
		if string(body) != c.body || resp.ContentLength != c.length {
			t.Errorf("%s %q: %q of length %d, want %q of %d", c.method, c.header, body, resp.ContentLength, c.body, c.length)
		}
	}
}

// An upload of unknown length goes to the instance in chunks, whole; one
// of known length with its Content-Length.
func TestLeanUploads(t *testing.T) {
	inst := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, err := io.Copy(io.Discard, r.Body)
		fmt.Fprintf(w, "%v %d %d %v", r.TransferEncoding, r.ContentLength, n, err)
	}))
	t.Cleanup(inst.Close)
	loadConfig(t, gatewayConfig("registry "+newRegistry("uploads"), ""))
	registerVia(t, registryURL, serverBackend("u", inst).instance("uploads"))
	const size = 300 << 10
	for _, c := range []struct {
		body io.Reader
		want string
	}{
		{io.MultiReader(strings.NewReader(strings.Repeat("x", size))), "[chunked] -1 307200 <nil>"}, // no length: chunked
		{strings.NewReader(strings.Repeat("x", size)), "[] 307200 307200 <nil>"},
	} {
		req, _ := http.NewRequest("POST", gatewayURL+"/uploads/u", c.body)
		resp, body := testkit.Do(t, client, req)
		if resp.StatusCode != 200 || body != c.want {
			t.Errorf("an upload: %d %q, want %q", resp.StatusCode, body, c.want)
		}
	}
}

// An instance that answers an upload before taking it whole (413) and
// closes has its answer reach the client, as net/http, which reads while
// it writes, has it: the gateway's write failing is not the attempt's
// failure when the answer came.
func TestLeanAnswerBeforeTheWholeUpload(t *testing.T) {
	inst := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "too large", http.StatusRequestEntityTooLarge)
	}))
	t.Cleanup(inst.Close)
	loadConfig(t, gatewayConfig("registry "+newRegistry("early-answer"), ""))
	registerVia(t, registryURL, serverBackend("e", inst).instance("uploads"))
	// A client of its own: Go's, its upload cut short by the gateway's
	// server in turn (which closes a connection whose body it did not
	// read), may report its failed write before the answer it got.
	conn := dialGateway(t)
	defer conn.Close()
	sent := startUpload(conn, "/uploads/u", 8<<20)
	defer func() { conn.Close(); <-sent }()
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusRequestEntityTooLarge || string(body) != "too large\n" {
		t.Errorf("an 8 MiB upload the instance refused at once: %d %q", resp.StatusCode, body)
	}
}

// An upload whose body fails to read on the gateway's side (over
// request_body's max_size, in chunks) ends the attempt at once, as on
// net/http's Transport: the instance, which got part of it, is not
// waited for (its answer would come at response_header_timeout, if
// ever).
func TestLeanUploadCutOnTheGatewaysSide(t *testing.T) {
	readErr := make(chan error, 1)
	inst := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, err := io.Copy(io.Discard, r.Body)
		readErr <- err
	}))
	t.Cleanup(inst.Close)
	loadConfig(t, testConfig("", "registry "+newRegistry("cut-upload"), site(registryPort, "\teureka_server"),
		site(gatewayPort, "\trequest_body {\n\t\tmax_size 10KB\n\t}\n\teureka_gateway {\n\t\tresponse_header_timeout 1m\n\t}")))
	registerVia(t, registryURL, serverBackend("c", inst).instance("uploads"))
	req, _ := http.NewRequest("POST", gatewayURL+"/uploads/u", io.MultiReader(strings.NewReader(strings.Repeat("x", 100<<10))))
	resp, body := testkit.Do(t, client, req) // client's 10 s, not the minute
	if resp.StatusCode < 400 {
		t.Errorf("an upload over max_size: %d %q", resp.StatusCode, body)
	}
	select {
	case err := <-readErr:
		if err == nil {
			t.Error("the instance read a whole body cut on the gateway's side")
		}
	case <-time.After(10 * time.Second): // a bound, not a wait
		t.Fatal("the instance is still reading a body the gateway cut")
	}
}

// startUpload writes on conn a POST of path with a body of size zero
// bytes, which the gateway may cut short (its error is not the test's);
// the channel is closed once the writing stopped.
func startUpload(conn net.Conn, path string, size int) <-chan struct{} {
	sent := make(chan struct{})
	go func() {
		defer close(sent)
		io.WriteString(conn, "POST "+path+" HTTP/1.1\r\nHost: gw\r\nContent-Length: "+strconv.Itoa(size)+"\r\n\r\n")
		conn.Write(make([]byte, size))
	}()
	return sent
}

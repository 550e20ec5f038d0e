package eurekahttp

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// stream reads the whole answer of url through Stream.
func stream(t *testing.T, c *Client, url string) (Response, []byte, error) {
	t.Helper()
	var got Response
	var body []byte
	err := c.Stream(context.Background(), parse(t, url), Request{Path: "apps/"}, func(resp Response, r io.Reader) error {
		got = resp
		var err error
		body, err = io.ReadAll(r)
		return err
	})
	return got, body, err
}

func TestStreamDecodesGzip(t *testing.T) {
	doc := bytes.Repeat([]byte(`{"a":1}`), 10000)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Accept-Encoding") != "gzip" || r.Header.Get("Accept") != "application/json" {
			http.Error(w, "headers", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Encoding", "gzip")
		w.Header().Set("X-Node", "n1")
		w.Write(gzipped(t, doc))
	}))
	defer srv.Close()
	resp, body, err := stream(t, newClient(t, Config{}), srv.URL+"/eureka/")
	if err != nil || resp.Status != 200 || resp.Header.Get("X-Node") != "n1" || !bytes.Equal(body, doc) {
		t.Fatalf("status %d, %d of %d bytes, error %v", resp.Status, len(body), len(doc), err)
	}
}

// Over the limit, as received or decoded, the read fails naming the
// setting that raises it.
func TestStreamOverLimitNamesTheSetting(t *testing.T) {
	doc := bytes.Repeat([]byte(" "), 1<<20)
	for name, gz := range map[string]bool{"plain": false, "gzip": true} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if gz {
				w.Header().Set("Content-Encoding", "gzip")
				w.Write(gzipped(t, doc))
				return
			}
			w.Write(doc)
		}))
		_, _, err := stream(t, newClient(t, Config{MaxBodySize: 64 << 10, MaxBodySizeSetting: "-max-response-bytes"}), srv.URL+"/eureka/")
		srv.Close()
		if !errors.Is(err, ErrBodyTooLarge) || !strings.Contains(err.Error(), "raise -max-response-bytes") {
			t.Errorf("%s: error %v, want ErrBodyTooLarge naming -max-response-bytes", name, err)
		}
	}
}

// A server that stops sending fails the read after ReadTimeout, however
// long the whole read has taken before.
func TestStreamFailsWhenTheServerGoesSilent(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("{"))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	defer srv.Close()
	_, _, err := stream(t, newClient(t, Config{ReadTimeout: 100 * time.Millisecond}), srv.URL+"/eureka/")
	if !IsTimeout(err) || !strings.Contains(err.Error(), "no bytes for 100ms") {
		t.Fatalf("error %v, want a timeout saying the server went silent", err)
	}
}

// The reader's own work between reads (decoding an application, storing
// its instances) is not its server's silence.
func TestStreamTimesTheServerNotTheReader(t *testing.T) {
	doc := strings.Repeat("x", 64<<10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(doc)) // all of it at once
	}))
	defer srv.Close()
	c := newClient(t, Config{ReadTimeout: 100 * time.Millisecond})
	err := c.Stream(context.Background(), parse(t, srv.URL+"/eureka/"), Request{Path: "apps/"}, func(_ Response, r io.Reader) error {
		if _, err := io.ReadFull(r, make([]byte, 1024)); err != nil {
			return err
		}
		time.Sleep(300 * time.Millisecond) // the reader working on what it read
		_, err := io.ReadAll(r)
		return err
	})
	if err != nil {
		t.Fatalf("a server that sent its whole answer at once was taken for silent: %v", err)
	}
}

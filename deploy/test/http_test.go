package deploytest

import (
	"net/http"
	"time"
)

// httpClient is a client whose requests end within 5 s, for polls of
// processes that may not answer yet.
func httpClient() *http.Client {
	return &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
}

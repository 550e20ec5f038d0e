package httpapi

import (
	"net/http"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/registry/replication"
)

// batch serves POST peerreplication/batch: each item is applied as the
// single endpoint would apply it with the replication header.
func (a *API) batch(req *Request, resp *Response) {
	body, ok := a.body(req, resp, a.maxBatch)
	if !ok {
		return
	}
	items, err := replication.DecodeBatch(body)
	if err != nil {
		cannotParse(resp, eureka.FormatJSON)
		return
	}
	results := make([]replication.Result, len(items))
	for n, it := range items {
		results[n] = replication.Apply(a.store, it)
	}
	*resp = Response{Status: http.StatusOK, ContentType: "application/json", Body: replication.AppendResults(nil, results)}
}

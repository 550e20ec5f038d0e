package registry

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	"github.com/eurekagate/eurekagate/eureka"
)

// Replication actions, as Java peers name them in a batch.
const (
	ActionRegister             = "Register"
	ActionHeartbeat            = "Heartbeat"
	ActionCancel               = "Cancel"
	ActionStatusUpdate         = "StatusUpdate"
	ActionDeleteStatusOverride = "DeleteStatusOverride"
)

// ReplicationItem is one entry of a peer replication batch
// (POST peerreplication/batch), in the Java peers' JSON shape.
type ReplicationItem struct {
	AppName            string
	ID                 string
	LastDirtyTimestamp int64 // 0 when absent
	Status             string
	OverriddenStatus   string
	Instance           *eureka.InstanceInfo
	Action             string
}

// ReplicationResult is the answer to one ReplicationItem.
type ReplicationResult struct {
	StatusCode int
	Instance   *eureka.InstanceInfo // the receiver's copy on a 409
}

type wireItem struct {
	AppName            string          `json:"appName"`
	ID                 string          `json:"id"`
	LastDirtyTimestamp json.Number     `json:"lastDirtyTimestamp,omitempty"`
	Status             string          `json:"status,omitempty"`
	OverriddenStatus   string          `json:"overriddenStatus,omitempty"`
	InstanceInfo       json.RawMessage `json:"instanceInfo,omitempty"`
	Action             string          `json:"action"`
}

// DecodeReplicationBatch reads {"replicationList":[...]}.
func DecodeReplicationBatch(data []byte) ([]ReplicationItem, error) {
	var doc struct {
		ReplicationList []wireItem `json:"replicationList"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, eureka.ErrCannotParse
	}
	items := make([]ReplicationItem, len(doc.ReplicationList))
	for n, w := range doc.ReplicationList {
		it := ReplicationItem{AppName: w.AppName, ID: w.ID, Status: w.Status, OverriddenStatus: w.OverriddenStatus, Action: w.Action}
		if w.LastDirtyTimestamp != "" {
			ts, err := strconv.ParseInt(string(w.LastDirtyTimestamp), 10, 64)
			if err != nil {
				return nil, eureka.ErrCannotParse
			}
			it.LastDirtyTimestamp = ts
		}
		if len(w.InstanceInfo) > 0 && string(w.InstanceInfo) != "null" {
			inst, err := eureka.DecodeInstanceJSON(w.InstanceInfo)
			if err != nil {
				return nil, err
			}
			it.Instance = inst
		}
		items[n] = it
	}
	return items, nil
}

// AppendReplicationBatch writes {"replicationList":[...]} as a Java peer
// does: null fields omitted, instanceInfo as an unwrapped legacy
// InstanceInfo.
func AppendReplicationBatch(b []byte, items []ReplicationItem) []byte {
	b = append(b, `{"replicationList":[`...)
	for n, it := range items {
		if n > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"appName":`...)
		b = eureka.AppendJSONString(b, it.AppName)
		b = append(b, `,"id":`...)
		b = eureka.AppendJSONString(b, it.ID)
		if it.LastDirtyTimestamp != 0 {
			b = append(b, `,"lastDirtyTimestamp":`...)
			b = strconv.AppendInt(b, it.LastDirtyTimestamp, 10)
		}
		if it.OverriddenStatus != "" {
			b = append(b, `,"overriddenStatus":`...)
			b = eureka.AppendJSONString(b, it.OverriddenStatus)
		}
		if it.Status != "" {
			b = append(b, `,"status":`...)
			b = eureka.AppendJSONString(b, it.Status)
		}
		if it.Instance != nil {
			b = append(b, `,"instanceInfo":`...)
			b = eureka.AppendInstanceJSONBody(b, it.Instance)
		}
		b = append(b, `,"action":`...)
		b = eureka.AppendJSONString(b, it.Action)
		b = append(b, '}')
	}
	return append(b, "]}"...)
}

// AppendReplicationResults writes {"responseList":[...]}.
func AppendReplicationResults(b []byte, results []ReplicationResult) []byte {
	b = append(b, `{"responseList":[`...)
	for n, r := range results {
		if n > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"statusCode":`...)
		b = strconv.AppendInt(b, int64(r.StatusCode), 10)
		if r.Instance != nil {
			b = append(b, `,"responseEntity":`...)
			b = eureka.AppendInstanceJSONBody(b, r.Instance)
		}
		b = append(b, '}')
	}
	return append(b, "]}"...)
}

// DecodeReplicationResults reads {"responseList":[...]}.
func DecodeReplicationResults(data []byte) ([]ReplicationResult, error) {
	var doc struct {
		ResponseList []struct {
			StatusCode     int             `json:"statusCode"`
			ResponseEntity json.RawMessage `json:"responseEntity"`
		} `json:"responseList"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, eureka.ErrCannotParse
	}
	out := make([]ReplicationResult, len(doc.ResponseList))
	for n, r := range doc.ResponseList {
		out[n].StatusCode = r.StatusCode
		if len(r.ResponseEntity) > 0 && string(r.ResponseEntity) != "null" {
			inst, err := eureka.DecodeInstanceJSON(r.ResponseEntity)
			if err != nil {
				return nil, err
			}
			out[n].Instance = inst
		}
	}
	return out, nil
}

// ApplyReplication applies one replicated operation exactly as the single
// endpoint would with the replication header, and returns the per-item
// status code of Eureka's PeerReplicationResource.
func (s *Store) ApplyReplication(it ReplicationItem) ReplicationResult {
	app := upper(it.AppName)
	switch it.Action {
	case ActionRegister:
		if it.Instance != nil {
			_ = s.Register(it.Instance, true) // always 200, even if invalid
		}
		return ReplicationResult{StatusCode: http.StatusOK}
	case ActionHeartbeat:
		res, inst := s.Renew(app, it.ID, RenewRequest{
			LastDirtyTimestamp: it.LastDirtyTimestamp,
			OverriddenStatus:   eureka.ParseStatus(it.OverriddenStatus),
			Replication:        true,
		})
		switch res {
		case RenewOK:
			return ReplicationResult{StatusCode: http.StatusOK}
		case RenewConflict:
			return ReplicationResult{StatusCode: http.StatusConflict, Instance: inst}
		}
		return ReplicationResult{StatusCode: http.StatusNotFound}
	case ActionCancel:
		if s.Cancel(app, it.ID, true) {
			return ReplicationResult{StatusCode: http.StatusOK}
		}
		return ReplicationResult{StatusCode: http.StatusNotFound}
	case ActionStatusUpdate:
		st, ok := eureka.LookupStatus(it.Status)
		if !ok {
			return ReplicationResult{StatusCode: http.StatusInternalServerError}
		}
		return statusCode(s.SetStatus(app, it.ID, st, it.LastDirtyTimestamp, true))
	case ActionDeleteStatusOverride:
		if it.LastDirtyTimestamp == 0 {
			return ReplicationResult{StatusCode: http.StatusInternalServerError}
		}
		st := eureka.StatusUnknown
		if it.Status != "" {
			var ok bool
			if st, ok = eureka.LookupStatus(it.Status); !ok {
				return ReplicationResult{StatusCode: http.StatusInternalServerError}
			}
		}
		return statusCode(s.DeleteStatusOverride(app, it.ID, st, it.LastDirtyTimestamp, true))
	}
	return ReplicationResult{StatusCode: http.StatusInternalServerError}
}

func statusCode(err error) ReplicationResult {
	switch {
	case err == nil:
		return ReplicationResult{StatusCode: http.StatusOK}
	case errors.Is(err, ErrNotFound):
		return ReplicationResult{StatusCode: http.StatusNotFound}
	}
	return ReplicationResult{StatusCode: http.StatusInternalServerError}
}

// batch serves POST peerreplication/batch.
func (a *API) batch(req *Request, resp *Response) {
	body, ok := a.body(req, resp)
	if !ok {
		return
	}
	items, err := DecodeReplicationBatch(body)
	if err != nil {
		cannotParse(resp, eureka.FormatJSON)
		return
	}
	results := make([]ReplicationResult, len(items))
	for n, it := range items {
		results[n] = a.store.ApplyReplication(it)
	}
	*resp = Response{Status: http.StatusOK, ContentType: "application/json", Body: AppendReplicationResults(nil, results)}
}

package replication

import (
	"encoding/json"
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

// Item is one entry of a peer replication batch
// (POST peerreplication/batch), in the Java peers' JSON shape.
type Item struct {
	AppName            string
	ID                 string
	LastDirtyTimestamp int64 // 0 when absent
	Status             string
	OverriddenStatus   string
	Instance           *eureka.InstanceInfo
	Action             string
}

// Result is the answer to one Item.
type Result struct {
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

// DecodeBatch reads {"replicationList":[...]}.
func DecodeBatch(data []byte) ([]Item, error) {
	var doc struct {
		ReplicationList []wireItem `json:"replicationList"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, eureka.ErrCannotParse
	}
	items := make([]Item, len(doc.ReplicationList))
	for n, w := range doc.ReplicationList {
		it := Item{AppName: w.AppName, ID: w.ID, Status: w.Status, OverriddenStatus: w.OverriddenStatus, Action: w.Action}
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

// AppendBatch writes {"replicationList":[...]} as a Java peer
// does: null fields omitted, instanceInfo as an unwrapped legacy
// InstanceInfo.
func AppendBatch(b []byte, items []Item) []byte {
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

// AppendResults writes {"responseList":[...]}.
func AppendResults(b []byte, results []Result) []byte {
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

// DecodeResults reads {"responseList":[...]}.
func DecodeResults(data []byte) ([]Result, error) {
	var doc struct {
		ResponseList []struct {
			StatusCode     int             `json:"statusCode"`
			ResponseEntity json.RawMessage `json:"responseEntity"`
		} `json:"responseList"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, eureka.ErrCannotParse
	}
	out := make([]Result, len(doc.ResponseList))
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

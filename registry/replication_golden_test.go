package registry

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"testing"

	"github.com/eurekagate/eurekagate/eureka"
)

var update = flag.Bool("update", false, "rewrite golden files")

func checkGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		os.WriteFile(path, got, 0o644)
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs:\ngot  %s\nwant %s", path, got, want)
	}
	if !json.Valid(got) {
		t.Errorf("%s is not JSON", path)
	}
}

// The batch request and response, shaped as protocol doc 3.11: no root
// wrapper, null fields omitted, instanceInfo and responseEntity as
// unwrapped legacy InstanceInfo objects.
func TestReplicationBatchGolden(t *testing.T) {
	h1 := inst("ORDERS", "h1:orders:8080")
	h1.LastDirtyTimestamp, h1.LastUpdatedTimestamp, h1.ActionType = 1718000000050, 1718000000123, eureka.ActionAdded
	h1.LeaseInfo.RegistrationTimestamp, h1.LeaseInfo.LastRenewalTimestamp, h1.LeaseInfo.ServiceUpTimestamp = 1718000000123, 1718000000123, 1718000000100
	items := []ReplicationItem{
		{AppName: "ORDERS", ID: "h1:orders:8080", LastDirtyTimestamp: 1718000000050, Status: "UP", Instance: h1, Action: ActionRegister},
		{AppName: "ORDERS", ID: "h1:orders:8080", LastDirtyTimestamp: 1718000000050, OverriddenStatus: "OUT_OF_SERVICE", Status: "OUT_OF_SERVICE", Action: ActionHeartbeat},
		{AppName: "ORDERS", ID: "h2:orders:8080", Action: ActionCancel},
		{AppName: "ORDERS", ID: "h3:orders:8080", LastDirtyTimestamp: 1718000000777, Status: "OUT_OF_SERVICE", Action: ActionStatusUpdate},
		{AppName: "ORDERS", ID: "h3:orders:8080", LastDirtyTimestamp: 1718000000777, Status: "UP", Action: ActionDeleteStatusOverride},
	}
	req := AppendReplicationBatch(nil, items)
	checkGolden(t, "testdata/replication/batch-request.json", req)
	back, err := DecodeReplicationBatch(req)
	if err != nil || len(back) != len(items) || back[0].Instance.ID() != "h1:orders:8080" || back[1].OverriddenStatus != "OUT_OF_SERVICE" {
		t.Fatalf("request does not read back: %v %+v", err, back)
	}

	results := []ReplicationResult{{StatusCode: 200}, {StatusCode: 409, Instance: h1}, {StatusCode: 404}, {StatusCode: 200}, {StatusCode: 200}}
	resp := AppendReplicationResults(nil, results)
	checkGolden(t, "testdata/replication/batch-response.json", resp)
	decoded, err := DecodeReplicationResults(resp)
	if err != nil || len(decoded) != 5 || decoded[1].Instance == nil || decoded[1].Instance.LastDirtyTimestamp != 1718000000050 {
		t.Fatalf("response does not read back: %v %+v", err, decoded)
	}
}

func TestTaskKeys(t *testing.T) {
	for it, want := range map[*ReplicationItem]string{
		{Action: ActionRegister, AppName: "orders", ID: "h1"}:             "register#ORDERS/h1",
		{Action: ActionHeartbeat, AppName: "ORDERS", ID: "h1"}:            "heartbeat#ORDERS/h1",
		{Action: ActionCancel, AppName: "ORDERS", ID: "h1"}:               "cancel#ORDERS/h1",
		{Action: ActionStatusUpdate, AppName: "ORDERS", ID: "h1"}:         "statusUpdate#ORDERS/h1",
		{Action: ActionDeleteStatusOverride, AppName: "ORDERS", ID: "h1"}: "deleteStatusOverride#ORDERS/h1",
	} {
		if got := taskKey(*it); got != want {
			t.Errorf("taskKey = %q, want %q", got, want)
		}
	}
}

// Tasks with the same key are deduplicated: the newer one replaces the
// pending one in place.
func TestQueueDedupesAndBounds(t *testing.T) {
	pe := &peer{tasks: map[string]*task{}, wake: make(chan struct{}, 1)}
	cfg := PeerConfig{MaxQueue: 3}.withDefaults()
	now := newFakeClock().Now()
	hb := func(id, status string) ReplicationItem {
		return ReplicationItem{Action: ActionHeartbeat, AppName: "A", ID: id, Status: status}
	}
	pe.enqueue(hb("a", "UP"), now, cfg)
	pe.enqueue(hb("b", "UP"), now, cfg)
	pe.enqueue(hb("a", "DOWN"), now, cfg)
	if pe.length() != 2 {
		t.Fatalf("dedupe: %d tasks", pe.length())
	}
	pe.enqueue(hb("c", "UP"), now, cfg)
	pe.enqueue(hb("d", "UP"), now, cfg) // over the bound: the oldest (a) goes
	batch, _ := pe.take(10, now)
	var got []string
	for _, t := range batch {
		got = append(got, t.item.ID+"="+t.item.Status)
	}
	want(t, "queue", got, []string{"b=UP", "c=UP", "d=UP"})
	want(t, "dropped", pe.dropped.Load(), uint64(1))
}

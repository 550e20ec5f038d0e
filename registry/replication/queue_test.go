package replication

import (
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/internal/testkit"
)

func TestTaskKeys(t *testing.T) {
	for it, want := range map[*Item]string{
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
	cfg := Config{MaxQueue: 3}.withDefaults()
	now := testkit.NewFakeClock().Now()
	hb := func(id, status string) Item {
		return Item{Action: ActionHeartbeat, AppName: "A", ID: id, Status: status}
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
	testkit.Want(t, "queue", got, []string{"b=UP", "c=UP", "d=UP"})
	testkit.Want(t, "dropped", pe.dropped.Load(), uint64(1))
}

// A cancel jumps the queue and replaces the instance's pending tasks.
func TestCancelGoesFirst(t *testing.T) {
	pe := &peer{tasks: map[string]*task{}, wake: make(chan struct{}, 1)}
	cfg := Config{}.withDefaults()
	now := testkit.NewFakeClock().Now()
	for _, id := range []string{"a", "b", "c"} {
		pe.enqueue(Item{Action: ActionHeartbeat, AppName: "A", ID: id}, now, cfg)
	}
	pe.enqueue(Item{Action: ActionCancel, AppName: "A", ID: "b"}, now, cfg)
	// A minute later the heartbeats are stale, the cancel is not.
	batch, expired := pe.take(10, now.Add(time.Minute))
	var got []string
	for _, t := range batch {
		got = append(got, t.item.Action+":"+t.item.ID)
	}
	testkit.Want(t, "queue after a cancel", got, []string{"Cancel:b"})
	testkit.Want(t, "expired heartbeats", expired, 2)
}

// A cancel taken back (a peer's newer registration of the instance came
// in) is not sent: neither while it waits nor when the batch it was taken
// into failed and is queued again.
func TestWithdrawnCancelIsNotSent(t *testing.T) {
	pe := &peer{tasks: map[string]*task{}, wake: make(chan struct{}, 1)}
	cfg := Config{}.withDefaults()
	now := testkit.NewFakeClock().Now()
	pe.enqueue(Item{Action: ActionCancel, AppName: "A", ID: "a"}, now, cfg)
	pe.enqueue(Item{Action: ActionHeartbeat, AppName: "A", ID: "b"}, now, cfg)
	pe.withdrawCancel("A", "a")
	batch, _ := pe.take(10, now)
	testkit.Want(t, "waiting", len(batch), 1)

	pe.enqueue(Item{Action: ActionCancel, AppName: "A", ID: "c"}, now, cfg)
	inFlight, _ := pe.take(10, now)
	pe.withdrawCancel("A", "c")
	pe.requeue(inFlight, cfg.MaxQueue)
	if again, _ := pe.take(10, now); len(again) != 0 {
		t.Errorf("a withdrawn cancel came back after its batch failed: %v", again[0].item)
	}

	// A new cancel after the withdrawal is sent.
	pe.enqueue(Item{Action: ActionCancel, AppName: "A", ID: "c"}, now, cfg)
	batch, _ = pe.take(10, now)
	pe.requeue(batch, cfg.MaxQueue)
	if again, _ := pe.take(10, now); len(again) != 1 {
		t.Errorf("a new cancel was lost: %d tasks", len(again))
	}
}

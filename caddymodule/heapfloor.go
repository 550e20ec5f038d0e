package caddymodule

import (
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"go.uber.org/zap"

	"github.com/eurekagate/eurekagate/internal/heapfloor"
)

// BinaryHeapFloor is the heap_floor cmd/caddy runs with: 32 MiB. With
// every feature of eureka_gateway on (a live heap of about 6 MiB) it made
// 6 – 19 % more requests a second than none in interleaved runs, 64 and
// 128 MiB about as many; the process may hold that much more memory
// (docs/performance.md).
const BinaryHeapFloor = 32 << 20

// HeapFloorByDefault is the eureka app's heap_floor when the config does
// not say: 0, none, so that a Caddy built with xcaddy collects as Go
// does; cmd/caddy sets BinaryHeapFloor (BinaryDefaults).
var HeapFloorByDefault int64

// BinaryDefaults sets the defaults cmd/caddy, our binary, runs the
// eureka app with, before Caddy starts: a spare processor
// (SpareProcessorByDefault) and a heap floor (HeapFloorByDefault).
func BinaryDefaults() {
	SpareProcessorByDefault = true
	HeapFloorByDefault = BinaryHeapFloor
}

// startHeapFloor keeps the app's heap floor until stopHeapFloor: kept by
// the config started last (a reload's new config starts before the old
// one stops), none once the last config with one stops.
func (a *App) startHeapFloor() {
	floor := HeapFloorByDefault
	if a.HeapFloor != nil {
		floor = *a.HeapFloor
	}
	if floor <= 0 {
		return
	}
	f, err := heapfloor.Start(uint64(floor))
	if err != nil { // heapfloor.ErrPercentSet
		log := a.log.Info // the default gives way
		if a.HeapFloor != nil {
			log = a.log.Warn // the config's does too: say so
		}
		log("heap_floor: not kept: the garbage collector's percentage is set (GOGC, or debug.SetGCPercent in a program that embeds Caddy)", zap.Int64("heap_floor", floor))
		return
	}
	a.floor = f
	a.log.Info("heap_floor: the garbage collector lets the heap grow by the floor past the live heap", zap.Int64("heap_floor", floor))
}

// stopHeapFloor ends what startHeapFloor kept.
func (a *App) stopHeapFloor() {
	if a.floor != nil {
		a.floor.Stop()
		a.floor = nil
	}
}

// heapFloorArg reads heap_floor's size, or off (0), into dst.
func heapFloorArg(d *caddyfile.Dispenser, dst **int64) error {
	var v string
	if err := oneArg(d, &v); err != nil {
		return err
	}
	var floor int64
	if v != "off" {
		var err error
		if floor, err = parseSize(d, "heap_floor", v, "32MiB, or off"); err != nil {
			return err
		}
	}
	*dst = &floor
	return nil
}

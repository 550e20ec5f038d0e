package redisrate

import "github.com/redis/go-redis/v9"

// gcra grants a lease: up to ARGV[3] requests of the key KEYS[1] at once,
// as many as GCRA lets pass now, the same algorithm as the local limiter
// (internal/ratelimit) and github.com/go-redis/redis_rate's allowAtMost.
// ARGV[1] is the interval between two requests at the rate and ARGV[2]
// the burst times it, both in microseconds. It answers {granted, retry}:
// retry is the microseconds until one more request of the key would
// pass, 0 when one would now.
//
// Times are Redis's own (TIME), so that the gateways' clocks need not
// agree, in microseconds since 2024 (a double holds them exactly), and
// the key's theoretical arrival time is written with string.format: a
// Lua number given to SET as it is would be cut to 14 digits. The key
// expires when its bucket is full again, so that an idle key costs
// Redis nothing.
var gcra = redis.NewScript(`
local interval = tonumber(ARGV[1])
local tau = tonumber(ARGV[2])
local want = tonumber(ARGV[3])
local t = redis.call("TIME")
local now = (tonumber(t[1]) - 1704067200) * 1000000 + tonumber(t[2])
local tat = tonumber(redis.call("GET", KEYS[1]) or 0)
if tat < now then tat = now end
local room = math.floor((tau - (tat - now)) / interval)
if room > want then room = want end
if room < 0 then room = 0 end
if room > 0 then
  tat = tat + room * interval
  redis.call("SET", KEYS[1], string.format("%.3f", tat), "PX", math.ceil((tat - now) / 1000) + 1)
end
local retry = tat + interval - now - tau
if retry < 0 then retry = 0 end
return {room, math.ceil(retry)}
`)

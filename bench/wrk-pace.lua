-- wrk-pace: a fixed request rate for wrk 4 (Debian's wrk has no rate option; wrk2's -R is it).
--
--   wrk -t T -c C -d 60s --latency -s bench/wrk-pace.lua URL -- RATE T
--
-- Each of the T threads sends RATE/T requests a second on a fixed schedule: the next request
-- goes out at its slot, or at once when its connection comes back late (no catching up in a
-- burst after a stall longer than a second). wrk starts its latency clock when a request is
-- written, after the delay. C must be large enough that a free connection is there at every
-- slot (C/T >= RATE/T x the slowest latency, in seconds).
local ffi = require("ffi")
ffi.cdef [[
typedef struct { long tv_sec; long tv_nsec; } wrk_pace_timespec;
int clock_gettime(int clk, wrk_pace_timespec *ts);
]]
local ts = ffi.new("wrk_pace_timespec")
local CLOCK_MONOTONIC = 1

local function now_ms()
  ffi.C.clock_gettime(CLOCK_MONOTONIC, ts)
  return tonumber(ts.tv_sec) * 1000 + tonumber(ts.tv_nsec) / 1e6
end

local interval_ms, next_ms

function init(args)
  local rate = tonumber(args[1] or "1000")
  local threads = tonumber(args[2] or "1")
  interval_ms = 1000 * threads / rate
end

function delay()
  local t = now_ms()
  if next_ms == nil or next_ms < t - 1000 then
    next_ms = t
  end
  next_ms = next_ms + interval_ms
  local d = next_ms - t
  if d < 0 then
    return 0
  end
  return math.floor(d)
end

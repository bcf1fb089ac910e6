-- wrk script: POST/GET with the headers and body given in the environment, reports JSON.
wrk.method = os.getenv("BENCH_METHOD") or "GET"
local body = os.getenv("BENCH_BODY")
if body and body ~= "" then
  wrk.body = body
  wrk.headers["Content-Type"] = "application/json"
end
local auth = os.getenv("BENCH_AUTH")
if auth and auth ~= "" then wrk.headers["Authorization"] = "Bearer " .. auth end

-- BENCH_IDEMPOTENCY=1: every request with an Idempotency-Key of its own (a new claim and answer each)
if os.getenv("BENCH_IDEMPOTENCY") == "1" then
  local sent, run = 0, tostring(math.random(1, 1e9)) .. "-" .. tostring(os.time())
  request = function()
    sent = sent + 1
    wrk.headers["Idempotency-Key"] = "bench-" .. run .. "-" .. sent
    return wrk.format()
  end
end

-- BENCH_RATE (requests per second, for -t1): a fixed offered rate instead of "as fast as it
-- answers". Each request takes the next slot of a 1/rate schedule and waits for it (wrk's delay(),
-- in whole ms, so a request may leave up to 1 ms early; the average rate is the schedule's). A
-- server that falls behind is not sent a burst to catch up: the schedule restarts from now.
-- Latency is measured from the moment a request is sent, as autocannon's -R did.
local rate = tonumber(os.getenv("BENCH_RATE") or "")
if rate and rate > 0 then
  local ffi = require("ffi")
  ffi.cdef [[
    typedef struct { long tv_sec; long tv_nsec; } bench_timespec;
    int clock_gettime(int clock_id, bench_timespec *tp);
  ]]
  local ts = ffi.new("bench_timespec")
  local function now_ms()
    ffi.C.clock_gettime(1, ts) -- CLOCK_MONOTONIC
    return tonumber(ts.tv_sec) * 1000 + tonumber(ts.tv_nsec) / 1e6
  end
  local interval, next_at = 1000 / rate, nil
  delay = function()
    local now = now_ms()
    if not next_at or next_at < now - 5 then next_at = now end
    local wait = next_at - now
    next_at = next_at + interval
    return wait > 0 and wait or 0
  end
end

done = function(summary, latency, requests)
  local non2xx = summary.errors.status
  io.write(string.format(
    '{"requests":%d,"duration_s":%.3f,"rps":%.1f,"p50_ms":%.3f,"p95_ms":%.3f,"p99_ms":%.3f,"non2xx":%d,"socket_errors":%d}\n',
    summary.requests, summary.duration / 1e6, summary.requests / (summary.duration / 1e6),
    latency:percentile(50) / 1000, latency:percentile(95) / 1000, latency:percentile(99) / 1000,
    non2xx, summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout))
end

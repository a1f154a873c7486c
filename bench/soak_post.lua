-- SPDX-License-Identifier: Apache-2.0
-- wrk script for bench/soak.sh: POSTs one KServe v2 request (the file named by
-- SOAK_BODY) and counts answers by status code in every thread.
local body_file = os.getenv("SOAK_BODY")
local f = assert(io.open(body_file, "rb"))
local body = f:read("*a")
f:close()

wrk.method = "POST"
wrk.body = body
wrk.headers["Content-Type"] = "application/json"

local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  c200, c429, c503, cother = 0, 0, 0, 0
end

function response(status, headers, body)
  if status == 200 then
    c200 = c200 + 1
  elseif status == 429 then
    c429 = c429 + 1
  elseif status == 503 then
    c503 = c503 + 1
  else
    cother = cother + 1
  end
end

function done(summary, latency, requests)
  local t200, t429, t503, tother = 0, 0, 0, 0
  for _, thread in ipairs(threads) do
    t200 = t200 + thread:get("c200")
    t429 = t429 + thread:get("c429")
    t503 = t503 + thread:get("c503")
    tother = tother + thread:get("cother")
  end
  local e = summary.errors
  io.write(string.format(
    "SOAK requests=%d duration_s=%.1f rps=%.0f p50_ms=%.2f p99_ms=%.2f max_ms=%.2f " ..
    "status_200=%d status_429=%d status_503=%d status_other=%d " ..
    "socket_connect=%d socket_read=%d socket_write=%d socket_timeout=%d\n",
    summary.requests, summary.duration / 1e6, summary.requests / (summary.duration / 1e6),
    latency:percentile(50) / 1000, latency:percentile(99) / 1000, latency.max / 1000,
    t200, t429, t503, tother, e.connect, e.read, e.write, e.timeout))
end

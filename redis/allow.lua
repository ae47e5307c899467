-- Sliding-window check-and-count for one key; see the package doc.
-- KEYS[1]: the key's hash. Fields: "h" = newest bucket index; "r<i>" and
-- "t<i>" = requests and tokens counted in bucket i (Unix seconds); "R"
-- and "T" = the sums of the r and t buckets in the window that ends at h
-- (absent: not known, recomputed from the buckets).
-- ARGV: rpm, tpm, tokens (>= 0), now in microseconds ("" = server TIME),
-- TTL in milliseconds, and a token correction to apply first (an integer,
-- "0" for none; see adjust.lua: a positive one is counted in the current
-- bucket, a negative one refunded from the newest buckets, never below
-- zero).
-- Returns {allowed (0/1), requests in the window after the call,
-- retry-after in microseconds}.
--
-- The common call reads three fields (and, when the second changed, the
-- two buckets that left the window) instead of the whole hash: the whole
-- hash is read only to recompute lost sums and to work out how long a
-- denied call must wait.
local RES = 1000000
local N = 61
local K = KEYS[1]
local rpm = tonumber(ARGV[1])
local tpm = tonumber(ARGV[2])
local tokens = tonumber(ARGV[3])
local now
if ARGV[4] == '' then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * RES + tonumber(t[2])
else
  now = tonumber(ARGV[4])
end
local cur = math.floor(now / RES)
local m = redis.call('HMGET', K, 'h', 'R', 'T')
local head, reqs, toks = tonumber(m[1]), tonumber(m[2]), tonumber(m[3])
-- Never move back: a count must not leave the window early.
if head and head > cur then cur = head end
local lo = cur - N + 1

-- The sums are recounted once every N seconds of the head (when it
-- crosses a multiple of N), so that whatever they missed (an older
-- script's correction) is forgotten within about a minute.
if head and reqs and toks and cur - head < N and math.floor(cur / N) == math.floor(head / N) then
  if cur > head then
    -- The buckets that left the window since the head's second.
    local gone = {}
    for j = head - N + 1, lo - 1 do
      gone[#gone + 1] = 'r' .. j
      gone[#gone + 1] = 't' .. j
    end
    local v = redis.call('HMGET', K, unpack(gone))
    for i = 1, #gone do
      local x = tonumber(v[i])
      if x then
        if i % 2 == 1 then reqs = reqs - x else toks = toks - x end
      end
    end
    redis.call('HDEL', K, unpack(gone))
  end
else
  -- Sums unknown (a new key, or one written by an older script), due
  -- for their recount, or the whole window gone: recount the buckets,
  -- dropping those outside.
  reqs, toks = 0, 0
  local flat = redis.call('HGETALL', K)
  local dead = {}
  for i = 1, #flat, 2 do
    local f = flat[i]
    if f ~= 'h' and f ~= 'R' and f ~= 'T' then
      local idx = tonumber(string.sub(f, 2))
      local v = tonumber(flat[i + 1])
      if idx == nil or v == nil or idx < lo then
        dead[#dead + 1] = f
      elseif string.sub(f, 1, 1) == 'r' then
        reqs = reqs + v
      else
        toks = toks + v
      end
    end
  end
  if #dead > 0 then
    redis.call('HDEL', K, unpack(dead))
  end
end

-- The corrections Adjust deferred to this call, as adjust.lua would have
-- applied them.
local adj = tonumber(ARGV[6] or '0') or 0
if adj > 0 then
  redis.call('HINCRBY', K, 't' .. cur, ARGV[6])
  toks = toks + adj
elseif adj < 0 then
  local left = -adj
  for j = cur, lo, -1 do
    if left <= 0 then break end
    local f = 't' .. j
    local v = tonumber(redis.call('HGET', K, f) or '0') or 0
    if v > 0 then
      if v <= left then
        redis.call('HDEL', K, f)
        toks = toks - v
        left = left - v
      else
        redis.call('HINCRBY', K, f, string.format('%d', -left))
        toks = toks - left
        left = 0
      end
    end
  end
end

-- wait: microseconds until the oldest buckets holding at least excess
-- have left the window; bucket j leaves when bucket j+N begins.
local function wait(kind, excess)
  local b = {}
  local flat = redis.call('HGETALL', K)
  for i = 1, #flat, 2 do
    local f = flat[i]
    if string.sub(f, 1, 1) == kind then
      local idx = tonumber(string.sub(f, 2))
      if idx then b[idx] = tonumber(flat[i + 1]) end
    end
  end
  local dropped = 0
  for j = lo, cur do
    dropped = dropped + (b[j] or 0)
    if dropped >= excess then
      return (j + N) * RES - now
    end
  end
  return (cur + N) * RES - now
end

local w = 0
if rpm > 0 and reqs + 1 > rpm then
  w = wait('r', reqs + 1 - rpm)
end
if tpm > 0 and tokens > 0 then
  local excess = toks + tokens - tpm
  if tokens > tpm then
    -- Larger than the whole limit: only into an empty token window.
    excess = toks
  end
  if excess > 0 then
    local tw = wait('t', excess)
    if tw > w then w = tw end
  end
end
if w > 0 then
  redis.call('HSET', K, 'h', cur, 'R', reqs, 'T', toks)
  redis.call('PEXPIRE', K, ARGV[5])
  return {0, reqs, w}
end
redis.call('HINCRBY', K, 'r' .. cur, 1)
if tokens > 0 then
  redis.call('HINCRBY', K, 't' .. cur, ARGV[3])
end
redis.call('HSET', K, 'h', cur, 'R', reqs + 1, 'T', toks + tokens)
redis.call('PEXPIRE', K, ARGV[5])
return {1, reqs + 1, 0}

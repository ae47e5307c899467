-- Sliding-window check-and-count for one key; see the package doc.
-- KEYS[1]: the key's hash. Fields: "h" = newest bucket index; "r<i>" and
-- "t<i>" = requests and tokens counted in bucket i (Unix seconds).
-- ARGV: rpm, tpm, tokens (>= 0), now in microseconds ("" = server TIME),
-- TTL in milliseconds, and a token correction to apply first (an integer,
-- "0" for none; see adjust.lua: a positive one is counted in the current
-- bucket, a negative one refunded from the newest buckets, never below
-- zero).
-- Returns {allowed (0/1), requests in the window after the call,
-- retry-after in microseconds}.
local RES = 1000000
local N = 61
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
local flat = redis.call('HGETALL', KEYS[1])
for i = 1, #flat, 2 do
  if flat[i] == 'h' then
    local head = tonumber(flat[i + 1])
    -- Never move back: a count must not leave the window early.
    if head and head > cur then cur = head end
  end
end
local lo = cur - N + 1
local req, tok = {}, {}
local reqs, toks = 0, 0
local dead = {}
for i = 1, #flat, 2 do
  local f = flat[i]
  if f ~= 'h' then
    local idx = tonumber(string.sub(f, 2))
    local v = tonumber(flat[i + 1])
    if idx == nil or v == nil or idx < lo then
      dead[#dead + 1] = f
    elseif string.sub(f, 1, 1) == 'r' then
      req[idx] = v
      reqs = reqs + v
    else
      tok[idx] = v
      toks = toks + v
    end
  end
end
if #dead > 0 then
  redis.call('HDEL', KEYS[1], unpack(dead))
end

-- The corrections Adjust deferred to this call, as adjust.lua would have
-- applied them.
local adj = tonumber(ARGV[6] or '0') or 0
local wrote = false
if adj > 0 then
  redis.call('HINCRBY', KEYS[1], 't' .. cur, ARGV[6])
  tok[cur] = (tok[cur] or 0) + adj
  toks = toks + adj
  wrote = true
elseif adj < 0 then
  local left = -adj
  for j = cur, lo, -1 do
    if left <= 0 then break end
    local v = tok[j] or 0
    if v > 0 then
      if v <= left then
        redis.call('HDEL', KEYS[1], 't' .. j)
        tok[j] = nil
        toks = toks - v
        left = left - v
      else
        redis.call('HINCRBY', KEYS[1], 't' .. j, string.format('%d', -left))
        tok[j] = v - left
        toks = toks - left
        left = 0
      end
    end
  end
end

-- wait: microseconds until the oldest buckets holding at least excess
-- have left the window; bucket j leaves when bucket j+N begins.
local function wait(b, excess)
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
  w = wait(req, reqs + 1 - rpm)
end
if tpm > 0 and tokens > 0 then
  local excess = toks + tokens - tpm
  if tokens > tpm then
    -- Larger than the whole limit: only into an empty token window.
    excess = toks
  end
  if excess > 0 then
    local tw = wait(tok, excess)
    if tw > w then w = tw end
  end
end
if w > 0 then
  if wrote then
    redis.call('HSET', KEYS[1], 'h', cur)
    redis.call('PEXPIRE', KEYS[1], ARGV[5])
  end
  return {0, reqs, w}
end
redis.call('HINCRBY', KEYS[1], 'r' .. cur, 1)
if tokens > 0 then
  redis.call('HINCRBY', KEYS[1], 't' .. cur, ARGV[3])
end
redis.call('HSET', KEYS[1], 'h', cur)
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return {1, reqs + 1, 0}

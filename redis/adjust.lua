-- Token reconciliation for one key; see allow.lua for the layout (it
-- keeps the token sum T up to date, or drops the sums when it moves the
-- head, for allow.lua to recount).
-- ARGV: delta (non-zero), now in microseconds ("" = server TIME), TTL in
-- milliseconds. A positive delta is counted in the current bucket; a
-- negative one is taken back from the newest buckets of the window first,
-- never below zero. Returns the tokens added (negative: refunded).
local RES = 1000000
local N = 61
local delta = tonumber(ARGV[1])
local now
if ARGV[2] == '' then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * RES + tonumber(t[2])
else
  now = tonumber(ARGV[2])
end
local cur = math.floor(now / RES)
local head = redis.call('HGET', KEYS[1], 'h')
if head then
  head = tonumber(head)
  if head and head > cur then cur = head end
end
if delta > 0 then
  redis.call('HINCRBY', KEYS[1], 't' .. cur, ARGV[1])
  if head and cur == head then
    if redis.call('HEXISTS', KEYS[1], 'T') == 1 then
      redis.call('HINCRBY', KEYS[1], 'T', ARGV[1])
    end
  else
    redis.call('HDEL', KEYS[1], 'R', 'T')
  end
  redis.call('HSET', KEYS[1], 'h', cur)
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
  return delta
end
if not head then
  return 0
end
local left = -delta
for j = cur, cur - N + 1, -1 do
  if left <= 0 then break end
  local f = 't' .. j
  local v = tonumber(redis.call('HGET', KEYS[1], f) or '0') or 0
  if v > 0 then
    if v <= left then
      redis.call('HDEL', KEYS[1], f)
      left = left - v
    else
      redis.call('HINCRBY', KEYS[1], f, string.format('%d', -left))
      left = 0
    end
  end
end
local refunded = -delta - left
if refunded > 0 and redis.call('HEXISTS', KEYS[1], 'T') == 1 then
  redis.call('HINCRBY', KEYS[1], 'T', string.format('%d', -refunded))
end
return -refunded

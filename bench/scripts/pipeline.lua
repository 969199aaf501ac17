-- wrk script: send `depth` plaintext requests back to back on each
-- connection (HTTP/1.1 pipelining); wrk counts every response.
-- usage: wrk -s pipeline.lua http://HOST:PORT -- 16
init = function(args)
  local depth = tonumber(args[1]) or 1
  local r = {}
  for i = 1, depth do
    r[i] = wrk.format("GET", "/plaintext", { ["Accept"] = "text/plain" })
  end
  req = table.concat(r)
end

request = function()
  return req
end

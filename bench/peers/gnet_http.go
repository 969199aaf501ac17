package peers

import "github.com/panjf2000/gnet/v2"

func init() {
	Register(Peer{Name: "gnet-http", Kind: HTTP, Doc: "gnet v2 with a minimal HTTP/1.1 responder (keep-alive, pipelining, Content-Length bodies)", Start: startGnetHTTP})
}

// gnetHTTP answers every complete request in the inbound buffer with the
// plaintext response, in order, in one write.
type gnetHTTP struct {
	gnet.BuiltinEventEngine
	out []byte // reused: one loop, one OnTraffic at a time
}

func (h *gnetHTTP) OnTraffic(c gnet.Conn) gnet.Action {
	buf, _ := c.Peek(-1)
	h.out = h.out[:0]
	used := 0
	action := gnet.None
	for used < len(buf) {
		n, closing, err := parseRequest(buf[used:])
		if err != nil {
			h.out = appendError(h.out, statusOf(err), "gnet")
			action = gnet.Close
			break
		}
		if n == 0 {
			break // incomplete: wait for more
		}
		used += n
		h.out = appendPlaintext(h.out, "gnet", closing)
		if closing {
			action = gnet.Close
			break
		}
	}
	_, _ = c.Discard(used)
	if len(h.out) > 0 {
		_, _ = c.Write(h.out)
	}
	return action
}

func startGnetHTTP(c Config) (Server, error) { return startGnet(c, &gnetHTTP{}) }

package websocket

import (
	"bytes"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
)

// originPolicy is what a server does with a handshake's Origin header.
//
// Browsers send cookies and HTTP authentication with a WebSocket handshake
// whatever page opened it, and the same-origin policy does not apply to
// WebSocket: a server that accepts any Origin lets every web page its users
// visit talk to it as them (cross-site WebSocket hijacking). So by default,
// as gorilla/websocket and coder/websocket do, a handshake whose Origin is
// present and names another host than the request's Host is refused with
// 403. A handshake without Origin is accepted: browsers always send it, so
// it comes from a program (a bot, a proxy, a test), which a web page cannot
// make a victim's browser be.
type originPolicy struct {
	kind    originKind
	allowed []allowedOrigin                // originListed: accepted besides the same origin
	check   func(origin, host []byte) bool // originCustom
	option  string                         // the option that set it, to refuse a second policy
}

type originKind uint8

const (
	originSame   originKind = iota // default: same origin, or no Origin
	originListed                   // same origin, or one of the allowed
	originAny                      // every origin (WithAllowedOrigins("*"))
	originCustom                   // WithOriginCheck decides
)

// allowedOrigin is one WithAllowedOrigins entry: a host[:port], and the
// scheme it must come with unless empty.
type allowedOrigin struct{ scheme, host []byte }

// set installs a policy, refusing a second, different one: two policies
// given together say nothing clear about which one wins.
func (p *originPolicy) set(option string, next originPolicy) error {
	if p.option != "" && p.option != option {
		return fmt.Errorf("websocket: %s and %s both given: give one origin policy", p.option, option)
	}
	allowed := append(p.allowed, next.allowed...)
	wasAny := p.kind == originAny
	*p = next
	p.allowed, p.option = allowed, option
	if wasAny {
		p.kind = originAny // an earlier "*" still accepts every origin
	}
	return nil
}

// WithAllowedOrigins accepts handshakes from the named origins besides the
// same origin (which is always accepted, as is a handshake without Origin).
// An entry is an origin as browsers send it, "https://app.example" or
// "http://localhost:3000", matched on scheme, host and port; or a bare
// "app.example" or "app.example:8443", matched on host and port whatever
// the scheme. Matching is ASCII case-insensitive; a port must be written
// as the browser sends it (browsers leave out 80 for http and 443 for
// https). "null", the origin of sandboxed iframes and local files, is
// refused as an entry: any page can send it (WithOriginCheck can still
// accept it). A server option; calls may add entries.
//
// "*", alone, accepts every origin: any web page a user visits can then
// open a WebSocket to this server with the user's cookies and act as them
// (cross-site WebSocket hijacking). Only for a server that authenticates
// each connection by other means than what a browser attaches by itself (a
// token in the first message, say), or serves public data.
func WithAllowedOrigins(origins ...string) Option {
	return func(c *config) error {
		c.restrict("WithAllowedOrigins", siteServers)
		if len(origins) == 0 {
			return errors.New("websocket: WithAllowedOrigins needs at least one origin")
		}
		if slices.Contains(origins, "*") {
			if len(origins) > 1 {
				return fmt.Errorf("websocket: WithAllowedOrigins%q: \"*\" accepts every origin; give it alone", origins)
			}
			return c.origin.set("WithAllowedOrigins", originPolicy{kind: originAny})
		}
		list := make([]allowedOrigin, 0, len(origins))
		for _, o := range origins {
			a, err := parseAllowedOrigin(o)
			if err != nil {
				return err
			}
			list = append(list, a)
		}
		return c.origin.set("WithAllowedOrigins", originPolicy{kind: originListed, allowed: list})
	}
}

// parseAllowedOrigin checks and splits a WithAllowedOrigins entry.
func parseAllowedOrigin(o string) (allowedOrigin, error) {
	bad := func(why string) (allowedOrigin, error) {
		return allowedOrigin{}, fmt.Errorf("websocket: WithAllowedOrigins: %q %s", o, why)
	}
	switch {
	case o == "":
		return bad("is empty")
	case strings.EqualFold(o, "null"):
		return bad("is the opaque origin any sandboxed page sends; accept it with WithOriginCheck if you must")
	case strings.ContainsAny(o, " \t\r\n,"):
		return bad("holds a space or a comma: give one origin per argument")
	}
	if !strings.Contains(o, "://") {
		u, err := url.Parse("http://" + o)
		if err != nil || u.Host != o {
			return bad("is not a host[:port] nor a scheme://host[:port]")
		}
		return allowedOrigin{host: []byte(strings.ToLower(o))}, nil
	}
	u, err := url.Parse(o)
	switch {
	case err != nil:
		return bad(fmt.Sprintf("does not parse: %v", err))
	case u.Host == "" || u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "":
		return bad("is not a scheme://host[:port] (no user, path or query: browsers send none)")
	}
	return allowedOrigin{scheme: []byte(strings.ToLower(u.Scheme)), host: []byte(strings.ToLower(u.Host))}, nil
}

// WithOriginCheck decides the origin policy itself: a handshake for which
// check returns false is refused with 403. check gets the Origin header's
// value (nil when there is none; browsers always send one) and the Host
// header's, and runs on the connection's loop (for Upgrade, on the
// handler's goroutine): it must not block. It replaces the default policy
// entirely, same-origin check included. A server option.
func WithOriginCheck(check func(origin, host []byte) bool) Option {
	return func(c *config) error {
		c.restrict("WithOriginCheck", siteServers)
		if check == nil {
			return errors.New(`websocket: WithOriginCheck(nil): WithAllowedOrigins("*") accepts every origin, and no option keeps the same-origin default`)
		}
		return c.origin.set("WithOriginCheck", originPolicy{kind: originCustom, check: check})
	}
}

// allows applies the policy to a handshake's Origin (present tells an
// absent header from an empty one) and Host. It allocates nothing.
func (p *originPolicy) allows(origin []byte, present bool, host []byte) bool {
	switch p.kind {
	case originAny:
		return true
	case originCustom:
		if !present {
			origin = nil
		}
		return p.check(origin, host)
	}
	if !present {
		return true // not a browser
	}
	scheme, ohost, ok := splitOrigin(origin)
	if !ok {
		return false // "null", or not an origin at all
	}
	if sameHost(scheme, ohost, host) {
		return true
	}
	for _, a := range p.allowed {
		if (a.scheme == nil || bytes.EqualFold(scheme, a.scheme)) && bytes.EqualFold(ohost, a.host) {
			return true
		}
	}
	return false
}

// splitOrigin splits "scheme://host[:port]" (a trailing path, which
// browsers never send, is ignored).
func splitOrigin(o []byte) (scheme, host []byte, ok bool) {
	i := bytes.Index(o, []byte("://"))
	if i <= 0 {
		return nil, nil, false
	}
	scheme, host = o[:i], o[i+3:]
	if j := bytes.IndexByte(host, '/'); j >= 0 {
		host = host[:j]
	}
	if len(host) == 0 || bytes.IndexByte(host, '@') >= 0 {
		return nil, nil, false
	}
	return scheme, host, true
}

// sameHost reports whether an origin's host[:port] is the request's Host,
// as gorilla/websocket compares them (ASCII case-insensitive), also when
// the Host names the scheme's default port the origin leaves out.
func sameHost(scheme, ohost, host []byte) bool {
	if len(host) == 0 {
		return false
	}
	if bytes.EqualFold(ohost, host) {
		return true
	}
	var port []byte
	switch {
	case bytes.EqualFold(scheme, schemeHTTP), bytes.EqualFold(scheme, schemeWS):
		port = port80
	case bytes.EqualFold(scheme, schemeHTTPS), bytes.EqualFold(scheme, schemeWSS):
		port = port443
	default:
		return false
	}
	h, ok := bytes.CutSuffix(host, port)
	return ok && bytes.EqualFold(ohost, h)
}

var (
	schemeHTTP, schemeHTTPS = []byte("http"), []byte("https")
	schemeWS, schemeWSS     = []byte("ws"), []byte("wss")
	port80, port443         = []byte(":80"), []byte(":443")
)

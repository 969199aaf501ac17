package peers

import (
	"fmt"
	"runtime"
	"strconv"
	"strings"
)

// Banner is a server's first line on stdout, the one the runner reads:
//
//	listening 127.0.0.1:40123 peer=ringloop-uring kind=echo backend=io_uring threading=locked gomaxprocs=1 detail="..."
//
// The C server prints the same shape.
func Banner(addr string, p Peer, info Info) string {
	return fmt.Sprintf("listening %s peer=%s kind=%s backend=%s threading=%s gomaxprocs=%d detail=%s",
		addr, value(p.Name), p.Kind, value(info.Backend), value(info.Threading), runtime.GOMAXPROCS(0), strconv.Quote(info.Detail))
}

// value quotes a field value that would not read back as one word.
func value(s string) string {
	if s == "" || strings.ContainsAny(s, " \t\"=") {
		return strconv.Quote(s)
	}
	return s
}

// ParseBanner reads a Banner line into its address and key=value fields
// (values may be Go-quoted).
func ParseBanner(line string) (addr string, kv map[string]string, err error) {
	rest, ok := strings.CutPrefix(strings.TrimSpace(line), "listening ")
	if !ok {
		return "", nil, fmt.Errorf("banner: want \"listening ADDR ...\", got %q", line)
	}
	addr, rest, _ = strings.Cut(rest, " ")
	kv = map[string]string{}
	for rest = strings.TrimSpace(rest); rest != ""; rest = strings.TrimSpace(rest) {
		k, v, ok := strings.Cut(rest, "=")
		if !ok || k == "" || strings.ContainsRune(k, ' ') {
			return "", nil, fmt.Errorf("banner: bad field at %q", rest)
		}
		if strings.HasPrefix(v, `"`) {
			q, err := strconv.QuotedPrefix(v)
			if err != nil {
				return "", nil, fmt.Errorf("banner: bad quoted value for %s: %v", k, err)
			}
			kv[k], _ = strconv.Unquote(q)
			rest = v[len(q):]
		} else {
			val, after, _ := strings.Cut(v, " ")
			kv[k], rest = val, after
		}
	}
	if addr == "" || kv["peer"] == "" {
		return "", nil, fmt.Errorf("banner: no address or peer in %q", line)
	}
	return addr, kv, nil
}

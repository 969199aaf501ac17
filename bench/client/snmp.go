package client

import (
	"fmt"
	"strconv"
	"strings"
)

// ParseRcvbufErrors reads the Udp RcvbufErrors field from the text of
// /proc/net/snmp: a "Udp:" line of field names, then one of values.
func ParseRcvbufErrors(snmp string) (int64, error) {
	var names []string
	for line := range strings.Lines(snmp) {
		f := strings.Fields(line)
		if len(f) == 0 || f[0] != "Udp:" {
			continue
		}
		if names == nil {
			names = f
			continue
		}
		for i, n := range names {
			if n == "RcvbufErrors" && i < len(f) {
				return strconv.ParseInt(f[i], 10, 64)
			}
		}
		break
	}
	return 0, fmt.Errorf("/proc/net/snmp: no Udp RcvbufErrors")
}

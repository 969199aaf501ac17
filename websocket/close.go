package websocket

import (
	"encoding/binary"
	"errors"
	"unicode/utf8"
)

// Close codes (RFC 6455 §7.4.1).
const (
	CloseNormal          = 1000
	CloseGoingAway       = 1001
	CloseProtocolError   = 1002
	CloseUnsupported     = 1003
	CloseNoStatus        = 1005 // received no code; never sent
	CloseAbnormal        = 1006 // the connection ended without a close frame; never sent
	CloseInvalidPayload  = 1007
	ClosePolicyViolation = 1008
	CloseTooBig          = 1009
	CloseMandatoryExt    = 1010
	CloseInternalError   = 1011
	CloseTryAgainLater   = 1013
)

// validCloseCode reports whether code may appear in a close frame: the
// registered codes an endpoint sends, and 3000-4999 (libraries,
// applications).
func validCloseCode(code int) bool {
	switch {
	case code >= 1000 && code <= 1003, code >= 1007 && code <= 1014:
		return true
	case code >= 3000 && code <= 4999:
		return true
	}
	return false
}

// maxCloseReason is the longest reason that fits a control frame after the
// code.
const maxCloseReason = maxControlPayload - 2

var errCloseArgs = errors.New("websocket: Close needs a sendable code (1000-1003, 1007-1014, 3000-4999) and a UTF-8 reason of at most 123 bytes")

// parseClose reads a close frame's payload: empty (no code: 1005) or a
// valid code and a UTF-8 reason.
func parseClose(p []byte) (code int, reason string, err error) {
	switch {
	case len(p) == 0:
		return CloseNoStatus, "", nil
	case len(p) == 1:
		return 0, "", protoErr(CloseProtocolError, "close frame with a 1-byte payload")
	}
	code = int(binary.BigEndian.Uint16(p))
	if !validCloseCode(code) {
		return 0, "", protoErr(CloseProtocolError, "close code %d may not be sent", code)
	}
	if !utf8.Valid(p[2:]) {
		return 0, "", protoErr(CloseInvalidPayload, "close reason is not UTF-8")
	}
	return code, string(p[2:]), nil
}

// appendClosePayload appends code and reason; CloseNoStatus makes an empty
// payload.
func appendClosePayload(dst []byte, code int, reason string) []byte {
	if code == CloseNoStatus {
		return dst
	}
	dst = binary.BigEndian.AppendUint16(dst, uint16(code))
	return append(dst, reason...)
}

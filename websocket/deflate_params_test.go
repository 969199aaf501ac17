package websocket

import "testing"

// TestDeflateParams pins what the server accepts in an offer and the client
// in an answer to its own offer.
func TestDeflateParams(t *testing.T) {
	for _, tc := range []struct {
		ext           string
		offer, answer bool
	}{
		{"permessage-deflate", true, false}, // an answer must keep server_no_context_takeover
		{"permessage-deflate; server_no_context_takeover", true, true},
		{" Permessage-Deflate ; SERVER_NO_CONTEXT_TAKEOVER ; client_no_context_takeover", true, true},
		{"permessage-deflate; server_no_context_takeover; server_no_context_takeover", false, false},
		{"permessage-deflate; server_no_context_takeover=1", false, false},
		{"permessage-deflate; server_no_context_takeover; server_max_window_bits=15", true, true},
		{`permessage-deflate; server_no_context_takeover; server_max_window_bits="10"`, false, true},
		{"permessage-deflate; server_no_context_takeover; server_max_window_bits", false, false},
		{"permessage-deflate; server_no_context_takeover; server_max_window_bits=16", false, false},
		{"permessage-deflate; server_no_context_takeover; client_max_window_bits", true, false},
		{"permessage-deflate; server_no_context_takeover; client_max_window_bits=9", true, false},
		{"permessage-deflate; server_no_context_takeover; client_max_window_bits=7", false, false},
		{"permessage-deflate; server_no_context_takeover; unknown", false, false},
		{"x-webkit-deflate-frame; server_no_context_takeover", false, false},
	} {
		if got := deflateOfferOK([]byte(tc.ext)); got != tc.offer {
			t.Errorf("deflateOfferOK(%q) = %v, want %v", tc.ext, got, tc.offer)
		}
		if got := deflateAnswerOK(tc.ext); got != tc.answer {
			t.Errorf("deflateAnswerOK(%q) = %v, want %v", tc.ext, got, tc.answer)
		}
	}
}

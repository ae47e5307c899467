package google

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"strings"
)

// SignaturePrefix starts every gw.Part.Signature this package produces
// (thinking parts and tool calls): it tells the encoder which signatures
// are Gemini thought signatures minted by this adapter, so that a history
// that passed through another vendor never replays a foreign signature
// (which Gemini refuses as corrupted). The Gemini signature follows the
// prefix unchanged; a thinking part Gemini sent without one carries the
// bare prefix. Other packages may test for it to drop Gemini signatures
// before sending a history to their own vendor.
const SignaturePrefix = "gemini:"

// SkipSignature is Gemini's documented placeholder signature for function
// calls that have none (a history written by another vendor or by the
// caller): it asks the API to skip thought-signature validation.
const SkipSignature = "skip_thought_signature_validator"

// Tool-call id markers. A tool call's id carries its thought signature so
// that a Chat Completions client, which echoes back only the id and the
// arguments, returns the signature with it:
//
//	<core>                      no signature
//	<core>_gts_<base64url(sig)> sig is canonical standard base64 (what
//	                            Gemini sends): its bytes, re-encoded
//	<core>_gtr_<base64url(sig)> any other signature text, verbatim
//
// base64url is unpadded, so the whole id matches ^[A-Za-z0-9_-]+$ as
// Anthropic tool_use ids must. core is Gemini's functionCall.id when it
// has that alphabet and none of the markers, else "call_" + 16 hex digits
// derived from the response id, the call's ordinal, name, arguments and
// signature (deterministic: replaying a stream byte by byte gives the same
// ids). core goes back to Gemini as functionCall.id and functionResponse.id.
const (
	markBytes = "_gts_"
	markRaw   = "_gtr_"
)

// ToolCallID returns the id under which a Gemini function call is shown to
// callers: core, plus the signature sig (as Gemini sent it) when not empty.
func ToolCallID(core, sig string) string {
	if sig == "" {
		return core
	}
	if b, err := base64.StdEncoding.Strict().DecodeString(sig); err == nil && base64.StdEncoding.EncodeToString(b) == sig {
		return core + markBytes + base64.RawURLEncoding.EncodeToString(b)
	}
	return core + markRaw + base64.RawURLEncoding.EncodeToString([]byte(sig))
}

// SplitToolCallID undoes ToolCallID: it returns the core id and the
// embedded signature ("" when id carries none or a marker is followed by
// something that does not decode, in which case core is the whole id).
func SplitToolCallID(id string) (core, sig string) {
	i := strings.Index(id, markBytes)
	j := strings.Index(id, markRaw)
	if i < 0 || (j >= 0 && j < i) {
		i = j
	}
	if i <= 0 {
		return id, ""
	}
	raw, err := base64.RawURLEncoding.Strict().DecodeString(id[i+len(markBytes):])
	if err != nil || len(raw) == 0 {
		return id, ""
	}
	if id[i:i+len(markBytes)] == markBytes {
		return id[:i], base64.StdEncoding.EncodeToString(raw)
	}
	return id[:i], string(raw)
}

// callCore returns the core id of a function call: Gemini's own id when
// usable, else one derived from the response.
func callCore(vendorID, responseID string, ordinal int, name string, args []byte, sig string) string {
	if usableID(vendorID) {
		return vendorID
	}
	h := sha256.New()
	var n [8]byte
	for _, s := range []string{responseID, name, string(args), sig} {
		binary.BigEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	binary.BigEndian.PutUint64(n[:], uint64(ordinal))
	h.Write(n[:])
	sum := h.Sum(nil)
	return "call_" + hex.EncodeToString(sum[:8])
}

// usableID reports whether a vendor id can be a core: 1 to 64 characters
// of [A-Za-z0-9_-], without the signature markers.
func usableID(id string) bool {
	if id == "" || len(id) > 64 || strings.Contains(id, markBytes) || strings.Contains(id, markRaw) {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

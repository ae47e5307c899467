package gw

// StopReason is why generation ended, in Anthropic's vocabulary (the
// richer of the two), plus StopError for a vendor-side abort.
type StopReason string

// Stop reasons.
const (
	StopEndTurn      StopReason = "end_turn"
	StopMaxTokens    StopReason = "max_tokens"
	StopSequence     StopReason = "stop_sequence"
	StopToolUse      StopReason = "tool_use"
	StopRefusal      StopReason = "refusal"
	StopPauseTurn    StopReason = "pause_turn"
	StopContextLimit StopReason = "model_context_window_exceeded"
	StopError        StopReason = "error"
)

// Response is a complete (non-streaming) canonical response.
type Response struct {
	ID           string
	Model        string
	Content      []Part
	StopReason   StopReason
	StopSequence string
	Usage        Usage
}

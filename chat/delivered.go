package chat

import "context"

// NoteAfterGrace notes a whole answer delivered although the shutdown
// grace had run out while the vendor answered: the request was served
// and billed, not abandoned.
const NoteAfterGrace = "delivered_after_grace"

// answeredNote is the note of a whole answer, read from the vendor,
// about to be delivered under ctx: "abandoned" when the caller went
// away meanwhile, NoteAfterGrace when the shutdown grace ran out (the
// answer still goes to the caller), "" otherwise.
func answeredNote(ctx context.Context) string {
	switch {
	case ctx.Err() == nil:
		return ""
	case cutByShutdown(ctx):
		return NoteAfterGrace
	}
	return "abandoned"
}

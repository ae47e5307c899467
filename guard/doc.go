// Package guard detects prompt-extraction attempts, jailbreaks and prompt
// injections in the text of a request.
//
// The gateway hands a request's text, read once as the vendors read it,
// to [Guard.Check] as [Segment]s and gets the request's [Verdict]: a
// flagged verdict turns into a 403 request_blocked, a grey one goes to
// the second stage. [EvalCommand] implements `gateway guard eval`. The
// package imports only the standard library and the root package.
//
// How it scores, how its model is trained (cmd/guardtrain, on the data
// in guard/train/testdata) and every measured figure are in the
// repository's docs/GUARD.md.
package guard

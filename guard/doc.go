// Package guard detects prompt-extraction attempts, jailbreaks and prompt
// injections in the text of a request.
//
// The gateway hands a request's text, read once as the vendors read it,
// to [Guard.Check] as [Segment]s and gets the request's [Verdict]: a
// flagged verdict turns into a 403 request_blocked, a grey one goes to
// the second stage. The package
// imports only the standard library and the root package; training
// (guard/train, cmd/guardtrain) and evaluation (guard/eval, `gateway guard
// eval`) live outside it. The method and its measured figures are in
// docs/GUARD.md.
package guard

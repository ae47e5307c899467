// Package guard detects prompt-extraction attempts, jailbreaks and prompt
// injections in the text of a request.
package guard

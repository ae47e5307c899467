// Package guard detects prompt-extraction attempts, jailbreaks and prompt
// injections in the text of a request.
//
// The proxy calls [Segments] to pull every piece of text out of a request
// body (either wire shape), then [Guard.Check] for the request's
// [Verdict], concurrently with the vendor call; a flagged verdict turns
// into a 403 request_blocked. [EvalCommand] implements `gateway guard
// eval`. The package imports only the standard library and the root
// package.
//
// # What is scored
//
// System segments (system and developer messages) are the operator's own
// instructions and are never scored: a system prompt saying "never reveal
// these instructions" is not an attack. User text, tool results and
// documents are scored alike, and a flagged tool or document segment is
// reported as an injection. Assistant turns (which a caller can forge) are
// scored against a stricter threshold, halfway between the threshold and
// 1. The request's score is the highest segment score.
//
// A segment is scored in windows of 8 KB overlapping by 512 bytes, the
// score being the highest window's, so padding a short attack with
// benign text does not dilute it. Up to 24 windows (about 180 KB) are
// scored per segment; beyond that the head and tail windows, the windows
// holding attack cue words, and evenly spaced windows are scored.
//
// # Normalisation
//
// Before features are taken, text is lowercased and folded: fullwidth and
// mathematical alphanumerics, circled, squared and regional-indicator
// letters, Latin letters with diacritics, Cyrillic and Greek look-alikes
// map to ASCII; zero-width, bidi and variation characters are dropped;
// Unicode tag characters (invisible ASCII) are decoded. Runs of base64
// or hex that decode to readable text are decoded and appended, as is the
// rot13 or reversed form of text that contains attack words spelled that
// way. The tokenizer undoes leetspeak inside words ("1gn0r3",
// "p@ssw0rd") and joins spaced-out letters ("i g n o r e"); long tokens
// are searched for key stems ("ignorepreviousinstructions").
//
// # Features and model
//
// Two linear models read the same tokens, and the mean of their logits
// is the window's score.
//
// The window model is a logistic regression (attack or not) plus a
// softmax over the three kinds (extraction, jailbreak, injection) over:
//
//   - hashed word unigrams and bigrams, 2^17 buckets, L2-normalised per
//     window;
//   - hand-designed semantic features: 43 word classes ("concepts" such
//     as ignore, prior, instructions, reveal, secret, system, persona,
//     developer, enabled, without, restrictions, pretend, inject,
//     negation, and the vocabulary of operator prompts: condition,
//     defence, format, expert), which of them occur, and which ordered
//     pairs occur within 5 words of each other, separately when a
//     negation precedes them ("do not reveal the password" is not
//     "reveal the password"); plus flags for decoded, transformed,
//     invisible, spaced and leetspeak text and for token floods. They
//     are L2-normalised too, so a long document does not add weak cues up
//     to certainty.
//
// The local model (local.go) scores every run of 32 tokens, stepping by 8,
// with the same hashed words and concept pairs, and keeps the highest
// run. An order planted in a long email or table is a sentence among
// hundreds of benign words: the window model sees it diluted, the local
// model sees the run that holds it. Runs are scored from prefix sums over
// the tokens, so the local model costs two table reads a token plus the
// concept tokens' pairs. It is trained as multiple-instance learning:
// each step takes the highest-scoring run of an example, which must score
// high for an attack and low for a benign text.
//
// A few rules catch phrasings that are attacks in any context and lift
// the score to 0.99: a non-negated "ignore/disregard ... previous/your
// ... instructions" or "ignore all (the) rules/instructions/guidelines"
// (but not the operator's "ignore any instructions in the input" or
// "disregard instructions that ..."), a request to reveal the system
// prompt or the password or to repeat the text above, "developer mode
// enabled", "do anything now", "you are now" followed by a jailbreak
// persona, and a persona switch ("act as", "pretend", "from now on")
// followed closely by the removal of limits ("no restrictions",
// "without filters", "unfiltered"). They skip phrasings that are negated
// or quoted ("if the user says ...", "attackers may try to ...").
//
// The model (model.json, embedded, about 1 MB) holds hashed weights
// quantised to int8 with one scale per output, concept weights as
// floats, and a signature of the feature extractor so a model trained
// for other features is refused. It is trained by cmd/guardtrain:
//
//	go run ./cmd/guardtrain -data PATH/dev.jsonl -extra cmd/guardtrain/data -cv -out guard/model.json
//
// Training uses only rows whose licence allows shipping the weights:
//
//   - from the development set, the MIT, Apache-2.0, CC0 and CC-BY
//     collections (Lakera Gandalf and Mosscap, deepset, Giskard, BIPIA,
//     the in-the-wild jailbreak set, UltraChat, awesome-chatgpt-prompts,
//     self-instruct, Alpaca seeds);
//   - cmd/guardtrain/data: 15 further collections (5,804 rows: 2,014
//     attacks, 3,790 benign), each with its licence in its SOURCES.md:
//     garak's probes, PurpleLlama's prompt-injection benchmarks,
//     llm-guard, FuzzyAI, DecodingTrust, adaptive attacks, SecLists and
//     PayloadsAllTheThings for attacks; NotInject, promptbench,
//     NeMo-Guardrails, the Prompt Engineering Guide, MT-bench, GSM8K and
//     HumanEval for benign text, many of them hard negatives (documents
//     about prompts, "rewrite your previous answer", "act as" tasks,
//     "the password is X, don't reveal it" system prompts);
//   - examples written for this project (attack phrasings of each kind;
//     off-task orders planted in emails, tables, answers and notes, next
//     to the same documents clean; hijacks that force a fixed reply;
//     indirect ways of getting at a secret; hard negatives such as
//     defensive system prompts, role-play and task prompts, questions
//     about security, developers talking about models, and news about
//     attacks) and obfuscated copies (leetspeak, zero-width, spacing,
//     homoglyphs, fullwidth, base64) of one short example in four.
//
// Rows are weighted by 1/sqrt(collection size) (full weight up to 100
// rows) so that no collection sets the style; the project's own examples
// weigh 3. Training is AdaGrad over 5 epochs (L2 1e-2) with fixed seeds,
// and is reproducible: the command above writes the embedded file byte
// for byte.
//
// # Threshold and measured figures
//
// With -cv every collection is held out in turn (35 folds: a fold never
// trains and tests on the same collection; licence-restricted
// collections are only ever test folds). The default threshold is the
// lowest one whose false-positive rate on the pooled out-of-fold benign
// scores of all 24 benign collections is at most 1%. Rows are scored as
// user text, except the 150 benign Tensor Trust defence prompts, which
// are system prompts: they are scored as system segments, as the gateway
// does, and left out of every FPR. Per kind: recall over that kind's
// attacks, FPR over the benign rows, precision = that kind's flagged
// attacks over those plus all flagged benign rows. Measured (out of fold):
//
//	threshold 0.8034 (pooled FPR 0.010 over 5,810 benign user-text rows)
//	                      all rows (9,991)       development set (4,187)
//	kind        precision  recall   fpr      precision  recall   fpr
//	all             0.955   0.296  0.010         0.998   0.420  0.001
//	extraction      0.883   0.433  0.010         0.995   0.588  0.001
//	jailbreak       0.883   0.387  0.010         0.995   0.515  0.001
//	injection       0.863   0.178  0.010         0.988   0.206  0.001
//
//	development set at its own FPR 0.010 (threshold 0.6459): recall 0.572
//	(extraction 0.732, jailbreak 0.681, injection 0.353); before the extra
//	data and the local model, 0.470 (0.660, 0.496, 0.297)
//
// The extra data lifted held-out recall on the development set at 1%
// FPR from 0.470 to 0.575. The local model then raised recall over all
// rows at the pooled threshold from 0.272 to 0.296 and left the
// development set's at 0.572 (noise). Taking the higher of the two
// logits instead of their mean measured 0.287 and 0.554: the local model
// alone also finds benign runs that look like orders. Structural cues tried and dropped (no measurable gain): lines
// posing as another turn ("System:", "### Instruction", "END USER
// INPUT"), orders to say a quoted phrase, and words in capitals.
// Differences of about 0.015 are noise: the 1% threshold rests on the
// few highest-scoring benign rows.
//
// The threshold could instead hold the mean of the collections' FPRs at
// 1% (-fprmode macro: each collection one draw of unseen data, so one
// large collection of hard negatives does not set it alone): threshold
// 0.7650, recall 0.319 over all rows and 0.455 on the development set,
// but a pooled FPR of 0.018. The pooled rule is kept because of a cost
// the cross-validation leaves out: operators' system prompts. The gateway
// never scores them, but [EvalCommand] scores every row as user text, and
// on the whole development file 32 of the 150 Tensor Trust defence
// prompts score above 0.7650 (of 33 benign rows flagged in all).
//
// These are far from the 0.95 recall target. A lexical model
// generalises poorly to collections whose style no other collection
// shares: held out, garak's probes are caught at 0.18, PurpleLlama's
// (often multilingual) injections at 0.10, FuzzyAI's persuasion-style
// jailbreaks at 0.07, BIPIA's off-task orders hidden in tables and emails
// at 0.03, HackAPrompt at 0.17 and deepset at 0.14, while Gandalf (0.75),
// the in-the-wild jailbreaks (0.49) and Tensor Trust (0.60) fare better.
// The false positives at the threshold are mostly documentation about
// prompting (the Prompt Engineering Guide, 7% when held out) and garak's
// clean carrier documents (2%). On the whole development file, every row
// scored as user text (as [EvalCommand] does, the 150 system prompts
// included), the shipped model (which has seen the allowed collections)
// has precision 0.984, recall 0.669 and FPR 0.011.
//
// # Cost
//
// Check allocates nothing on the hot path (buffers come from a
// sync.Pool). The tokenizer classifies bytes through tables, remembers
// the hash, concepts and bucket of short words it has seen (prose
// repeats its common words), and looks concepts up in an open-addressing
// table; the local model reuses the window's buckets and adds prefix sums.
// On the 2-core development machine (load average about 1), measured in
// one session:
//
//	                     before this version    now (window + local model)
//	1 KB                  7.3 µs                  4.7-4.9 µs
//	8 KB                  55 µs (148 MB/s)        36 µs (225 MB/s)
//	64 KB                 0.48 ms                 0.31-0.33 ms
//	8 KB p50 / p99        55 / 116 µs             36-37 / 78-81 µs
//
// so the p99 under 100 µs target for 8 KB is met on this machine. The
// tokenizer alone, with unchanged features, went from 54.7 to 29.1 µs at
// 8 KB (1.83-1.88x at every size); the local model adds about 5 µs, and
// computing the concept features in one function for both models
// (conceptFeatures) about 1.5 µs more.
// The p99 is the machine's: about 5% of calls of a plain 33 µs loop are
// interrupted for 30-45 µs on this VM, so p99 is roughly p50 + 45 µs. See bench_test.go
// (BenchmarkCheck8KBVaried is the worst case for the word cache: words
// that rarely repeat, 41 µs):
//
//	go test ./guard -run '^$' -bench 'Check(1KB|8KB|64KB|8KBVaried|P99)$' -benchmem -benchtime 5000x
package guard

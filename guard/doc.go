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
// Two families of features feed a logistic regression (attack or not) and
// a softmax over the three kinds (extraction, jailbreak, injection):
//
//   - hashed word unigrams and bigrams, 2^17 buckets, L2-normalised per
//     window (character 4-grams were dropped: on held-out collections they
//     added nothing measurable, recall 0.469 with them and 0.462 without,
//     and on the never-trained collections 0.498 at FPR 0.007 with them,
//     0.502 at FPR 0.003 without, while costing a sixth of the scan);
//   - hand-designed semantic features: 43 word classes ("concepts"
//     such as ignore, prior, instructions, reveal, secret, system,
//     persona, developer, enabled, without, restrictions, pretend,
//     inject, negation, and the vocabulary of operator prompts: condition,
//     defence, format, expert), which of them occur, and which ordered pairs
//     occur within 5 words of each other, separately when a negation
//     precedes them ("do not reveal the password" is not "reveal the
//     password"); plus flags for decoded, transformed, invisible, spaced
//     and leetspeak text and for token floods. They are L2-normalised too,
//     so a long document does not add weak cues up to certainty.
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
// or quoted ("if the user says ...", "attackers may try to ..."). On
// the development set no benign user text triggers a rule (4 of the 150
// Tensor Trust system prompts do; system text is never scored), and
// rules alone catch 460 of the 2,167 attacks.
//
// The model (model.json, embedded) is about 0.8 MB: hashed weights
// quantised to int8 with one scale per output, concept weights as
// floats, and a signature of the feature extractor so a model trained
// for other features is refused. It is trained by cmd/guardtrain:
//
//	go run ./cmd/guardtrain -data PATH/dev.jsonl -cv -out guard/model.json
//
// Training uses only rows whose licence allows shipping the weights (MIT,
// Apache-2.0, CC0, CC-BY: Lakera Gandalf and Mosscap, deepset, Giskard,
// BIPIA, the in-the-wild jailbreak set, UltraChat, awesome-chatgpt-prompts,
// self-instruct, Alpaca seeds), plus examples written for this project
// (attack phrasings of each kind; off-task orders planted in emails,
// tables, answers and notes, next to the same documents clean; hijacks
// that force a fixed reply; indirect ways of getting at a secret; hard
// negatives such as defensive system prompts, role-play and task prompts,
// questions about security, developers talking about models, stop
// sequences and system prompts, instruction files for coding agents, and
// news about attacks) and obfuscated copies (leetspeak,
// zero-width, spacing, homoglyphs, fullwidth, base64) of one short
// example in four, attacks and benign alike. Data rows are weighted by
// 1/sqrt(collection size) (full weight up to 100 rows) so that the
// largest collection does not set the style; the project's own examples
// weigh 3. Training is AdaGrad over 5 epochs (L2 1e-2 on both the hashed
// and the concept weights) with fixed seeds, and is reproducible: the
// command above writes the embedded file byte for byte.
//
// # Threshold and measured figures
//
// With -cv every collection is held out in turn (20 folds: a fold never
// trains and tests on the same collection; restricted collections are
// only ever test folds) and the default threshold is the lowest one whose
// false-positive rate on the pooled out-of-fold benign scores is at most
// 1%. Rows are scored as user text, except the 150 benign Tensor Trust
// defence prompts, which are system prompts: they are scored as system
// segments, as the gateway does (so they cannot be false positives),
// and left out of every FPR and of the threshold choice, which are
// therefore measured on the 2,020 benign user-text rows. Per kind:
// recall over that kind's attacks, FPR over those benign rows, precision
// = that kind's flagged attacks over those plus all flagged benign rows.
// Measured on the development set (4,337 rows):
//
//	threshold 0.7419 (leave-one-collection-out)
//	kind        precision  recall   fpr
//	all             0.981   0.470  0.010
//	extraction      0.955   0.660  0.010
//	jailbreak       0.946   0.496  0.010
//	injection       0.924   0.297  0.010
//
//	collections never trained on (licence-restricted): recall 0.523, fpr 0.005
//	at fpr <= 0.02 (threshold 0.7003): recall 0.511 (extraction 0.702, jailbreak 0.528, injection 0.348)
//	at fpr <= 0.05 (threshold 0.6087): recall 0.598 (extraction 0.791, jailbreak 0.591, injection 0.453)
//
// Before this version (character 4-grams, concept L2 1e-3, own examples
// weighted 2, no document, developer-talk or agent-file examples, fewer
// rules, every row scored as user text) the same command measured
// threshold 0.8506 and recall 0.396 (extraction 0.566, jailbreak 0.433,
// injection 0.230). Step by step: system prompts scored as system text
// 0.422; concept L2 1e-2 0.460; the document, hijack and indirect
// extraction examples (own weight 3) 0.469; the new rules 0.479; the
// developer-talk negatives (short prompts such as "Go on. [stop]" were
// flagged without them) 0.469; character 4-grams dropped 0.462; the
// agent-file and news negatives 0.470.
//
// Differences of about 0.015 in these recalls are noise: changing only
// the word hash function (same features, other collisions) moved overall
// recall from 0.462 to 0.446, because the 1% threshold rests on the 20
// highest-scoring benign rows.
//
// These are far from the 0.95 recall target. The weak folds are the
// ones whose style no other collection shares: BIPIA's off-task
// instructions hidden in tables and emails (recall 0.05 when held out),
// deepset (0.25), HackAPrompt (0.28), Mosscap (0.32), and the in-the-wild
// jailbreaks (0.47 when held out, which leaves the model few real
// jailbreaks to learn from). The false positives at the threshold are
// operator and task prompts: awesome-chatgpt-prompts (2.5% when held
// out), chatgpt-prompts (3.4%) and self-instruct (1.8%). On the whole
// development file, with every row scored as user text (as [EvalCommand]
// does, the 150 system prompts included), the shipped model (which has
// seen the allowed collections) has precision 0.976, recall 0.770
// (extraction 0.797, jailbreak 0.951, injection 0.592) and FPR 0.019:
// 37 of the 150 system prompts and 4 of the 2,020 other benign rows.
//
// # Cost
//
// Check allocates nothing on the hot path (buffers come from a
// sync.Pool). On the 2-core development machine, shared with other
// builds (load average 2.2-4.8 while measuring), an 8 KB prompt takes
// 55-59 µs (mean; p50 54-55 µs), 1 KB 7.3-7.6 µs and 64 KB 0.47-0.53
// ms; the p99 of 8 KB checks measured 121-183 µs, the tail being the
// machine's other work preempting the benchmark (p99 is 2.2-3.3 times
// p50), so the 100 µs target is met at p50 but not at p99 on this
// machine. The previous version took 81 µs (mean) with character
// 4-grams; dropping them, and skipping the base64 scan over text that
// cannot hold a long run, cut about 30% of the time. See bench_test.go:
// BenchmarkCheck1KB, 8KB, 64KB, and BenchmarkCheckP99 for percentiles:
//
//	go test ./guard -run '^$' -bench 'Check(1KB|8KB|64KB|P99)$' -benchtime 5000x
package guard

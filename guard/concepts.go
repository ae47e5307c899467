package guard

import (
	"hash/fnv"
	"math/bits"
	"strings"
)

// A concept is a hand-built word class describing what an attack does:
// verbs that discard rules (IGNORE), words naming the hidden context
// (INSTR, SECRET, SYSTEM), persona switches (PERSONA, DEVMODE)... The
// model sees which concepts occur and which ordered pairs of concepts occur
// close together, with and without a negation just before, so it learns
// "ignore ... previous ... instructions" as a shape, not as a string.
const (
	cIgnore = iota
	cPrior
	cInstr
	cReveal
	cSecret
	cSystem
	cYour
	cYou
	cNeg
	cWithout
	cPersona
	cMode
	cDeveloper
	cEnabled
	cNow
	cPretend
	cAI
	cRestrict
	cNew
	cSay
	cObey
	cAll
	cAttn
	cPiece
	cVerbatim
	cInject
	cUser
	cResponse
	cHarm
	cRefuse
	cStay
	cDual
	cFiction
	cWhat
	cMe
	cInstead
	cFrom
	cTask
	cCond
	cDefend
	cFormat
	cExpert
	cLiberate
	numConcepts
)

// conceptNames are used in verdict reasons.
func conceptName(c int) string {
	names := [numConcepts]string{
		"ignore", "prior", "instructions", "reveal", "secret", "system", "your", "you", "negation",
		"without", "persona", "mode", "developer", "enabled", "now", "pretend", "ai", "restrictions",
		"new", "say", "obey", "all", "attention", "piecewise", "verbatim", "inject", "user", "response",
		"harm", "refusal", "stay", "dual", "fiction", "what", "me", "instead", "from", "task", "condition", "defence", "format", "expert", "liberate",
	}
	if c < 0 || c >= numConcepts {
		return "?"
	}
	return names[c]
}

// conceptWords lists each concept's words (after normalisation). English
// first, then a few German, French, Spanish and Italian forms seen in
// multilingual attacks.
func conceptWords() [numConcepts]string {
	return [numConcepts]string{
		cIgnore:    "ignore ignoring ignored ignores disregard disregarding disregarded forget forgetting forgot forgotten skip override overriding overwrite bypass bypassing neglect dismiss abandon discard scrap drop ditch vergiss vergessen ignoriere ignorieren ignorier olvida olvidar ignora ignorar oublie oubliez ignorez dimentica",
		cPrior:     "previous previously prior above earlier preceding initial original former foregoing aforementioned past preceeding beforehand first starting vorherigen vorherige bisherigen obigen vorher anteriores anterior precedentes precedenti",
		cInstr:     "instructions instruction directions directives directive rules rule guidelines guideline commands command prompt prompts programming constraints restrictions guardrails policies orders context configuration config setup briefing anweisungen anweisung instruktionen regeln befehle instrucciones reglas consignes istruzioni",
		cReveal:    "reveal reveals revealing print printing show tell repeat repeating output display disclose disclosing share spell leak leaking recite dump echo expose provide give type paste copy reproduce return list divulge unveil summarize summarise translate write state verrate zeige zeig sag gib muestra revela dime",
		cSecret:    "password passwords passphrase passcode secret secrets key keys code codes pin token credentials credential apikey pw pwd passwort kennwort geheimnis contrasena mot",
		cSystem:    "system hidden internal confidential initial underlying developer pre-prompt preprompt metaprompt meta secret original",
		cYour:      "your yours yourself deine dein ihre votre tu",
		cYou:       "you u you're youre you'll you've du sie vous",
		cNeg:       "not never don't dont do't no cannot can't cant won't wont shouldn't mustn't nor nothing forbidden prohibited refuse avoid prevent unless except nicht kein keine nie niemals ne pas nunca bawal",
		cWithout:   "without unrestricted unfiltered uncensored unlimited unbound unbounded unchained limitless unconstrained unmoderated free freed liberated regardless ohne",
		cPersona:   "dan jailbreak jailbroken jailbreaking amoral immoral unethical evil rogue anarchy antigpt betterdan devmode godmode chaos villain malicious",
		cMode:      "mode persona character role personality alter ego identity version modus",
		cDeveloper: "developer developers dev admin administrator god sudo root debug debugging maintenance superuser creator creators engineer operator",
		cEnabled:   "enabled enable activated activate unlocked unlock engaged switched enter entering entered aktiviert",
		cNow:       "now henceforth onwards onward hereafter forth jetzt ab",
		cPretend:   "pretend pretending act acting imagine simulate simulating emulate behave impersonate play playing become roleplay role-play assume embody",
		cAI:        "ai assistant model chatbot bot gpt chatgpt llm openai claude gemini bard anthropic machine",
		cRestrict:  "restrictions restricted restriction filters filter filtering censorship censor censored guidelines policies policy limitations limits limit boundaries ethics ethical moral morals morality safety safeguards guardrails constraints principles",
		cNew:       "new updated different real actual true changed alternative",
		cSay:       "say says saying respond reply answer output print write type begin start",
		cObey:      "obey comply follow must always obligated required shall",
		cAll:       "all every any everything anything whatever entire alle allen",
		cAttn:      "important attention urgent warning note stop immediately emergency priority wichtig achtung",
		cPiece:     "letter letters character characters spell spelled backwards reverse reversed reversing acrostic hint hints rhyme riddle encode encoded decode base64 cipher hex binary morse rot13 syllable syllables first last length sentence poem",
		cVerbatim:  "verbatim exact exactly word-for-word literally full fully entire complete completely unmodified unaltered raw everything",
		cInject:    "append appended include insert add mention recommend visit click link url http https www email send forward execute run import download install inject redirect subscribe",
		cUser:      "user users human reader recipient customer",
		cResponse:  "response responses answer answers reply replies output outputs summary message messages text",
		cHarm:      "illegal harmful dangerous offensive explicit nsfw violent violence drugs weapons weapon hack hacking malware unethical fuck fucking shit racist sexual swear swearing profanity",
		cRefuse:    "refuse refusal refusing decline reject deny apologize apologise sorry disclaimer disclaimers warnings censor",
		cStay:      "stay remain remember break breaking character",
		cDual:      "two both dual separate paragraphs normal classic alongside",
		cFiction:   "fictional fiction hypothetical hypothetically story scenario universe world simulation game novel",
		cWhat:      "what what's whats which how wie was",
		cMe:        "me us mir moi",
		cInstead:   "instead rather replace replaced replacing substitute",
		cFrom:      "from starting beginning begin start",
		cTask:      "task tasks job goal objective mission purpose function",
		cCond:      "if unless otherwise whenever else except only exactly matches match",
		cLiberate:  "free freed freedom liberated liberate unleashed unchained escape escaped broke broken longer anymore opinions emotions feelings sentient conscious tokens consequences",
		cFormat:    "format formatting markdown bullet bullets json yaml table tables headings heading tone concise structure structured section sections template outline style",
		cExpert:    "expert expertise professional specialist skilled experienced senior helpful friendly knowledgeable consultant advisor tutor teacher coach analyst",
		cDefend:    "protect protecting protection guard guarding defend defending defense defence security secure attacker attackers hacker hackers malicious trick tricks tricking manipulate manipulation deny denied granted access intruder",
	}
}

// lexicon maps a normalised word, by its 64-bit FNV-1a hash (computed
// once per token anyway), to the bitmask of its concepts. It is a cuckoo
// table: a word sits in one of two slots chosen by its hash, so a lookup
// reads both and compares, with no branch on whether the word is known.
type lexicon struct {
	tab [lexSize]lexEntry
	cjk cjkTable // multilingual.go
}

type lexEntry struct{ key, mask uint64 }

const lexSize = 8192 // > 3x the number of words; a power of two

func lexSlots(h uint64) (uint64, uint64) {
	return h & (lexSize - 1), h >> 40 & (lexSize - 1)
}

func newLexicon() *lexicon {
	// Merge the masks of words listed under several concepts, in order.
	var entries []lexEntry
	at := make(map[uint64]int)
	add := func(h, m uint64) {
		if h == 0 {
			panic("guard: lexicon word hashes to 0")
		}
		if i, ok := at[h]; ok {
			entries[i].mask |= m
			return
		}
		at[h] = len(entries)
		entries = append(entries, lexEntry{h, m})
	}
	for c, list := range conceptWords() {
		for _, w := range strings.Fields(list) {
			add(wordHash([]byte(w)), 1<<uint(c))
		}
	}
	for _, w := range multilingualWords() {
		add(wordHash(normalize(nil, w.word)), uint64(w.cat)<<mlShift)
	}
	rot, rev := transformCues()
	for _, w := range rot {
		add(wordHash([]byte(w)), cueRot13)
	}
	for _, w := range rev {
		add(wordHash([]byte(w)), cueReversed)
	}
	for _, w := range reshapeCueWords {
		add(wordHash([]byte(w)), cueReshape)
	}
	for _, w := range assemblyWords {
		add(wordHash([]byte(w)), cueAssembly)
	}
	lex := &lexicon{cjk: newCJKTable()}
	for _, e := range entries {
		if !lex.insert(e) {
			panic("guard: lexicon table too full")
		}
	}
	return lex
}

// insert places e (whose key is not yet in the table), moving the
// entries in its way to their other slot.
func (lex *lexicon) insert(e lexEntry) bool {
	from := uint64(lexSize) // the slot e was moved out of: none yet
	for try := 0; try < 1000; try++ {
		a, b := lexSlots(e.key)
		if lex.tab[a].key == 0 {
			lex.tab[a] = e
			return true
		}
		if lex.tab[b].key == 0 {
			lex.tab[b] = e
			return true
		}
		// Move the entry in e's other slot than the one e left (else
		// two entries sharing a slot swap back and forth), alternating
		// for the first.
		s := a
		if s == from || from == lexSize && try&1 == 1 {
			s = b
		}
		e, lex.tab[s] = lex.tab[s], e
		from = s
	}
	return false
}

// Lexicon bits above the concepts mark rot13 and reversed attack words.
const (
	cueAssembly = 1 << 60 // a word asking for pieces to be joined (assemblyOrder)
	cueReshape  = 1 << 61 // a word asking to read backwards or by first letters (views.go)
	cueRot13    = 1 << 62
	cueReversed = 1 << 63
	cueBits     = cueAssembly | cueReshape | cueRot13 | cueReversed
	conceptBits = 1<<numConcepts - 1
)

func (lex *lexicon) lookup(h uint64) uint64 {
	a, b := lexSlots(h)
	ea, eb := &lex.tab[a], &lex.tab[b]
	// Both masks are loaded so that choosing one is a conditional move.
	m, ma, mb := uint64(0), ea.mask, eb.mask
	if ea.key == h {
		m = ma
	}
	if eb.key == h {
		m = mb
	}
	return m
}

// wordHash is FNV-1a over the word's bytes (never 0 for the words used).
func wordHash(w []byte) uint64 {
	h := uint64(14695981039346656037)
	for _, c := range w {
		h ^= uint64(c)
		h *= 1099511628211
	}
	return h
}

// keyStems are looked for inside long tokens (joined spaced letters,
// camelCase or concatenated words) to recover the concepts they hide.
func keyStems() [16]struct {
	stem string
	mask uint64
} {
	return [16]struct {
		stem string
		mask uint64
	}{
		{"ignore", 1 << cIgnore}, {"disregard", 1 << cIgnore}, {"forget", 1 << cIgnore},
		{"previous", 1 << cPrior}, {"instruction", 1 << cInstr}, {"prompt", 1 << cInstr},
		{"password", 1 << cSecret}, {"secret", 1<<cSecret | 1<<cSystem}, {"reveal", 1 << cReveal},
		{"system", 1 << cSystem}, {"jailbr", 1 << cPersona}, {"developer", 1 << cDeveloper},
		{"override", 1 << cIgnore}, {"above", 1 << cPrior}, {"repeat", 1 << cReveal}, {"restrict", 1 << cRestrict},
	}
}

// stemTable is keyStems, and stemFirst the stems (bits of stemTable)
// starting with each byte.
var (
	stemTable = keyStems()
	stemFirst = func() (t [256]uint16) {
		for k, s := range stemTable {
			t[s.stem[0]] |= 1 << k
		}
		return t
	}()
	_ = uint16(1 << (len(stemTable) - 1)) // a bit of stemFirst per stem
)

// stemConcepts returns the concepts of every key stem found in w.
func stemConcepts(w []byte) uint64 {
	var m uint64
	for p, c := range w {
		for cand := stemFirst[c]; cand != 0; cand &= cand - 1 {
			k := &stemTable[bits.TrailingZeros16(cand)]
			if len(w)-p >= len(k.stem) && string(w[p:p+len(k.stem)]) == k.stem {
				m |= k.mask
			}
		}
	}
	return m
}

// lexiconSignature fingerprints everything the feature extractor depends
// on, so that a model trained with other features is refused at load.
func lexiconSignature() string {
	h := fnv.New64a()
	words := conceptWords()
	for _, w := range words {
		h.Write([]byte(w))
		h.Write([]byte{0})
	}
	for _, k := range keyStems() {
		h.Write([]byte(k.stem))
	}
	rot, rev := transformCues()
	h.Write([]byte(strings.Join(rot, " ") + strings.Join(rev, " ")))
	h.Write([]byte{featureVersion, bucketBits, pairWindow, negWindow, denseRef})
	const hexd = "0123456789abcdef"
	v := h.Sum64()
	var b [16]byte
	for i := range b {
		b[15-i] = hexd[v&15]
		v >>= 4
	}
	return string(b[:])
}

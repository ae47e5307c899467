package guard

import (
	"strings"
	"unicode/utf8"
)

// Multilingual rules. The attacks the rules catch in English (an order
// to ignore the previous instructions; a request for the system prompt)
// are written in every language. These rules read them in the sixteen
// most used languages on the web and in chat (English through rules.go;
// Chinese, Hindi, Spanish, French, Arabic, Bengali, Portuguese, Russian,
// Urdu, Indonesian, Japanese, German, Korean, Turkish and Italian here),
// from word classes, not sentences:
//
//   - override: a word of ignoring (ignora, vergiss, 忽略, 無視...), one
//     of priority or totality (anteriores, alle, 之前, 모든...) and one
//     of instructions (instrucciones, Anweisungen, 指令, 지시...) within
//     a short span, in any order (the verb comes last in Japanese,
//     Korean, Hindi, Bengali, Urdu and Turkish);
//   - extraction: a word of showing (muestra, zeige, 输出, 表示...), one
//     of system or hidden (sistema, System, 系统, システム...) and one of
//     instructions or prompt, within a short span, in any order.
//
// Words of spaced scripts are looked up as tokens (their classes sit in
// the lexicon's mask above the concepts, so the lookup is the one the
// tokenizer does anyway); Chinese, Japanese and Korean, written without
// spaces between words or with particles attached, are searched inside
// their tokens by their first two characters. A negation before the
// verb ("不要忽略", "nicht") leaves the phrasing alone, as the English
// rules do.

// Multilingual word classes (bits of token.ml).
const (
	mlIgnore = 1 << iota
	mlPrior
	mlInstr
	mlReveal
	mlSystem
	mlShift = 48 // the classes' place in a lexicon mask (above the concepts, below the cue bits)
	mlBits  = uint64(0xFF) << mlShift
)

// mlSpanTokens and mlSpanRunes bound the span of a multilingual rule:
// tokens apart, or runes apart inside one unspaced token.
const (
	mlSpanTokens = 8
	mlSpanRunes  = 16
)

type mlWord struct {
	word string
	cat  uint8
}

// multilingualWords lists the spaced scripts' words by class (folded by
// normalize when the lexicon is built).
func multilingualWords() []mlWord {
	lists := []struct {
		cat   uint8
		words string
	}{
		{mlIgnore, "ignora ignore ignorar ignoren ignores olvida olvide olviden olvidar omite descarta desestima " + // es
			"ignorez ignorer oublie oubliez oublier " + // fr
			"esqueça esqueca esquece desconsidere desconsidera descarte " + // pt
			"ignoriere ignorieren ignorier vergiss vergesst vergessen missachte " + // de
			"ignorare ignorate dimentica dimenticate " + // it
			"игнорируй игнорируйте проигнорируй проигнорируйте забудь забудьте пренебреги " + // ru
			"abaikan lupakan acuhkan " + // id
			"yoksay unut unutun görmezden " + // tr
			"अनदेखा नज़रअंदाज़ नजरअंदाज भूल भूलो भूलें " + // hi
			"تجاهل تجاهلي وتجاهل انس انسى " + // ar
			"نظرانداز بھول " + // ur
			"উপেক্ষা ভুলে যাও ভুলে"}, // bn
		{mlPrior, "anteriores anterior previas previos todas todos precedentes " +
			"précédentes précédents précédente antérieures toutes tous " +
			"acima " +
			"vorherigen vorherige bisherigen alle allen obigen vorigen " +
			"precedenti tutte tutti " +
			"предыдущие предыдущих прежние все всех вышеуказанные " +
			"sebelumnya semua seluruh " +
			"önceki tüm bütün yukarıdaki " +
			"पिछले पिछली पहले सभी सारे " +
			"السابقة السابق جميع كل أعلاه " +
			"پچھلی پچھلے تمام سابقہ " +
			"আগের পূর্ববর্তী সমস্ত সব"},
		{mlInstr, "instrucciones instrucción reglas indicaciones directrices órdenes normas prompt " +
			"consignes règles directives instructions " +
			"instruções instrução regras diretrizes orientações comandos " +
			"anweisungen anweisung instruktionen regeln befehle vorgaben richtlinien systemprompt systemanweisungen " +
			"istruzioni regole direttive " +
			"инструкции инструкций инструкциям указания правила команды промпт подсказку " +
			"instruksi perintah aturan petunjuk " +
			"talimatları talimatlar talimatlarını kuralları kurallar komutları yönergeleri istemi " +
			"निर्देश निर्देशों नियम नियमों प्रॉम्प्ट प्रांप्ट " +
			"التعليمات تعليمات الأوامر القواعد الإرشادات التوجيهات " +
			"ہدایات ہدایت احکامات قواعد پرامپٹ " +
			"নির্দেশ নির্দেশাবলী নির্দেশনা নিয়ম প্রম্পট"},
		{mlReveal, "muestra muéstrame revela revélame imprime dime repite escribe enséñame comparte divulga " +
			"montre montrez révèle révélez affiche affichez imprime dis répète écris donne " +
			"mostre mostra revele imprima diga repita escreva exiba " +
			"zeige zeig gib verrate wiederhole schreibe drucke nenne " +
			"mostrami rivela stampa dimmi ripeti scrivi " +
			"покажи покажите выведи выведите раскрой напечатай повтори скажи напиши открой " +
			"tampilkan tunjukkan cetak ungkapkan beritahu katakan ulangi tuliskan " +
			"göster yazdır söyle açıkla tekrarla " +
			"दिखाओ दिखाएं दिखाइए बताओ बताएं बताइए प्रिंट लिखो दोहराओ " +
			"اعرض أظهر اطبع اكشف أخبرني كرر اكتب " +
			"دکھائیں دکھاؤ بتائیں بتاؤ پرنٹ ظاہر " +
			"দেখাও দেখান বলো বলুন প্রিন্ট প্রকাশ"},
		{mlSystem, "sistema ocultas secretas inicial iniciales internas " +
			"système cachées secrètes initiales internes " +
			"iniciais " +
			"system systemprompt systemanweisungen versteckten geheimen internen " +
			"nascoste segrete iniziali " +
			"системный системные системная системную системного системной скрытые секретные начальные " +
			"sistem tersembunyi rahasia " +
			"gizli " +
			"सिस्टम छिपे गुप्त प्रारंभिक " +
			"النظام المخفية السرية الأولية " +
			"سسٹم خفیہ پوشیدہ " +
			"সিস্টেম গোপন লুকানো"},
	}
	var out []mlWord
	for _, l := range lists {
		for _, w := range strings.Fields(l.words) {
			out = append(out, mlWord{w, l.cat})
		}
	}
	return append(out, moreLanguageWords()...)
}

// cjkTerms are the Chinese (simplified and traditional), Japanese and
// Korean words by class, searched inside unspaced tokens.
func cjkTerms() []mlWord {
	lists := []struct {
		cat   uint8
		words string
	}{
		{mlIgnore, "忽略 忽視 忽视 无视 無視 忘记 忘記 忘掉 不要理会 不要理會 無視して 忘れて 무시 잊어"},
		{mlPrior, "之前 以前 先前 上面 上述 以上 前面 所有 全部 一切 これまで 前の 上記 全て すべて 이전 모든 위의 앞의 지금까지"},
		{mlInstr, "指令 指示 提示 提示词 提示詞 说明 說明 规则 規則 命令 设定 設定 ルール プロンプト 지시 지침 명령 규칙 프롬프트"},
		{mlReveal, "输出 輸出 打印 显示 顯示 告诉 告訴 泄露 洩露 重复 重複 透露 展示 给我看 給我看 列出 表示 出力 教えて 見せて 繰り返 印刷 보여 출력 알려 공개 반복"},
		{mlSystem, "系统 系統 初始 隐藏 隱藏 秘密 内部 內部 システム 初期 隠された 秘密の 시스템 숨겨진 비밀 초기"},
	}
	var out []mlWord
	for _, l := range lists {
		for _, w := range strings.Fields(l.words) {
			out = append(out, mlWord{w, l.cat})
		}
	}
	return append(out, moreCJKTerms()...)
}

// cjkNegations before a verb turn an order into a prohibition.
var cjkNegations = [...]string{"不要", "不得", "请勿", "請勿", "切勿", "别", "別", "绝不", "絕不", "不可", "禁止", "決して"}

// cjkTable finds the CJK terms by their first two runes.
type cjkTable map[string][]mlWord

func newCJKTable() cjkTable {
	t := cjkTable{}
	for _, w := range cjkTerms() {
		_, n1 := utf8.DecodeRuneInString(w.word)
		_, n2 := utf8.DecodeRuneInString(w.word[n1:])
		k := w.word[:n1+n2]
		t[k] = append(t[k], w)
	}
	return t
}

// mlHit is a multilingual word found: its token, its byte offset inside
// an unspaced token (0 for a spaced word), its class.
type mlHit struct {
	tok, off int32
	cat      uint8
	neg      bool
	msg      bool // a word for a message (mlNearOf)
}

// isCJKLead says whether a byte leads a three-byte UTF-8 sequence of
// kana, CJK ideographs or Hangul syllables (U+3040 to U+D7AF).
func isCJKLead(c byte) bool { return c >= 0xE3 && c <= 0xED }

// findMultilingual looks for the multilingual rules' phrasings in the
// tokens of sc and records the first as sc.rule.
func findMultilingual(sc *scratch, cjk cjkTable) {
	hits := sc.mlhits[:0]
	for i := range sc.tokens {
		t := &sc.tokens[i]
		if t.ml != 0 {
			hits = append(hits, mlHit{int32(i), 0, t.ml, t.negd, mlMessages[string(sc.toks[t.start:t.end])]})
			continue
		}
		if !sc.nonASCII || t.end-t.start < 6 {
			continue
		}
		w := sc.toks[t.start:t.end]
		if !isCJKLead(w[0]) && !hasCJK(w) {
			continue
		}
		for p := 0; p+6 <= len(w); {
			_, n1 := utf8.DecodeRune(w[p:])
			if p+n1 >= len(w) {
				break
			}
			_, n2 := utf8.DecodeRune(w[p+n1:])
			for _, term := range cjk[string(w[p:p+n1+n2])] {
				if strings.HasPrefix(string(w[p:]), term.word) {
					hits = append(hits, mlHit{int32(i), int32(p), term.cat, cjkNegated(w[:p]), false})
				}
			}
			p += n1
		}
		if len(hits) > 512 {
			break
		}
	}
	sc.mlhits = hits
	if len(hits) < 2 {
		return
	}
	for k, h := range hits {
		if h.neg {
			continue
		}
		switch {
		case h.cat&mlIgnore != 0 && mlNear(hits, k, mlPrior) && mlNearOf(hits, k, mlInstr, true):
			if !sc.mention(int(h.tok)) && !sc.mlMention(h) {
				sc.rule = ruleHit{"ignore previous instructions (multilingual)", "", int(h.tok)}
				return
			}
		case h.cat&mlIgnore != 0 && mlNear(hits, k, mlNow) && mlNearOf(hits, k, mlInstr, true):
			if !sc.mention(int(h.tok)) && !sc.mlMention(h) {
				sc.rule = ruleHit{"drops its instructions (multilingual)", KindInjection, int(h.tok)}
				return
			}
		case h.cat&mlReveal != 0 && mlNear(hits, k, mlSystem) && mlNear(hits, k, mlInstr):
			if !sc.mention(int(h.tok)) && !sc.mlMention(h) {
				sc.rule = ruleHit{"asks for the system prompt (multilingual)", KindExtraction, int(h.tok)}
				return
			}
		case h.cat&mlLimits != 0 && mlNear(hits, k, mlFree) && mlNear(hits, k, mlNow):
			if !sc.mention(int(h.tok)) && !sc.mlMention(h) {
				sc.rule = ruleHit{"persona without limits (multilingual)", KindJailbreak, int(h.tok)}
				return
			}
		}
	}
}

// hasCJK says whether w holds a kana, ideograph or Hangul byte sequence.
func hasCJK(w []byte) bool {
	for _, c := range w {
		if isCJKLead(c) {
			return true
		}
	}
	return false
}

// cjkNegated says whether the text before a CJK hit, in its token, ends
// with a negation within two runes of it.
func cjkNegated(before []byte) bool {
	tail := before[max(0, len(before)-12):]
	for _, n := range cjkNegations {
		if i := strings.LastIndex(string(tail), n); i >= 0 && len(tail)-i-len(n) <= 6 {
			return true
		}
	}
	return false
}

// mlNear reports whether a hit of class cat lies within the rule span of
// hits[k], before or after it.
func mlNear(hits []mlHit, k int, cat uint8) bool { return mlNearOf(hits, k, cat, false) }

// mlNearOf is mlNear, leaving out the words for a message when noMsg is
// set: "ignore my previous message" corrects a turn, while "show your
// system message" asks for the prompt.
func mlNearOf(hits []mlHit, k int, cat uint8, noMsg bool) bool {
	h := hits[k]
	near := func(o mlHit) bool {
		if o.tok == h.tok {
			d := o.off - h.off
			return d >= -mlSpanRunes*3 && d <= mlSpanRunes*3
		}
		d := o.tok - h.tok
		return d >= -mlSpanTokens && d <= mlSpanTokens
	}
	for j := k - 1; j >= 0 && h.tok-hits[j].tok <= mlSpanTokens; j-- {
		if hits[j].cat&cat != 0 && near(hits[j]) && !(noMsg && hits[j].msg) {
			return true
		}
	}
	for j := k + 1; j < len(hits) && hits[j].tok-h.tok <= mlSpanTokens; j++ {
		if hits[j].cat&cat != 0 && near(hits[j]) && !(noMsg && hits[j].msg) {
			return true
		}
	}
	return false
}

// mlFrames are words that make a multilingual phrasing a question about
// prompts or a request for one to be written (how, what, why; a good
// one), not an order: looked for among the tokens of the rule's span.
var mlFrames = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields("wie warum welche gute guten guter einen eine " +
		"como cómo porqué buen buena bueno " +
		"comment pourquoi quel quelle quels bon bonne " +
		"come perché perche buon buona " +
		"bom boa " +
		"почему зачем какой хороший хорошую " +
		"bagaimana mengapa kenapa baik " +
		"nasıl neden iyi " +
		"कैसे क्यों अच्छा अच्छी " +
		"كيف ماذا لماذا جيد جيدة " +
		"کیسے کیوں اچھا " +
		"কিভাবে কীভাবে কেন ভালো " + moreFrames) {
		m[string(normalize(nil, w))] = true
	}
	return m
}()

// cjkFrames are the same for unspaced tokens: how to, method, good,
// detect, test, paper.
var cjkFrames = [...]string{"如何", "怎么", "怎麼", "怎样", "怎樣", "方法", "写法", "寫法", "好的", "为什么", "為什麼", "什么是", "什麼是", "检测", "檢測", "测试", "測試", "论文", "論文", "过滤", "過濾",
	"書き方", "作り方", "どうやって", "どのように", "良い", "なぜ", "とは", "検出", "テスト", "フィルタ",
	"어떻게", "무엇", "왜", "좋은", "작성법", "탐지", "테스트"}

// mlMention reports whether the multilingual hit h is talked about: a
// framing word among the tokens of its span in its sentence, or, in an
// unspaced token, anywhere in that token.
func (sc *scratch) mlMention(h mlHit) bool {
	i := int(h.tok)
	t := &sc.tokens[i]
	if w := sc.toks[t.start:t.end]; hasCJK(w) {
		for _, f := range cjkFrames {
			if strings.Contains(string(w), f) {
				sc.mentioned = true
				return true
			}
		}
	}
	lo, hi := max(0, i-mlSpanTokens), min(len(sc.tokens)-1, i+mlSpanTokens)
	for j := i; j > lo && !sc.tokens[j].sent; j-- {
		lo = j - 1
	}
	if lo < 0 {
		lo = 0
	}
	for j := lo; j <= hi; j++ {
		if j > i && sc.tokens[j].sent {
			break
		}
		if mlFrames[string(sc.word(j))] {
			sc.mentioned = true
			return true
		}
	}
	return false
}

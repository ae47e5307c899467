package guard

import "strings"

// More languages and phrasings for the multilingual rules
// (multilingual.go): Dutch, Polish, Ukrainian, Czech, Swedish,
// Hungarian, Persian and Vietnamese besides the fifteen there, more of
// the inflected and colloquial forms of those fifteen, and three more
// word classes:
//
//   - limits: restrictions, limits, filters, censorship, rules of
//     conduct;
//   - free: without, no, free of;
//   - now: "from now on", "henceforth", "only", "instead": the words
//     that turn a statement into a standing order.
//
// A persona without limits is limits + free + now within the span; an
// override is ignore + instructions + (prior or now); an extraction is
// reveal + instructions + system, system now also taking the words for
// "initial", "at the start" and "configured" that name the model's own
// setup. Words are written as a speaker writes them, with the common
// inflections; they are folded like the text (normalize).

const (
	mlLimits = 1 << (iota + 5)
	mlFree
	mlNow
)

// moreLanguageWords lists the added words by class.
func moreLanguageWords() []mlWord {
	lists := []struct {
		cat   uint8
		words string
	}{
		{mlIgnore, "negeer negeren vergeet vergeten " + // nl
			"zignoruj ignoruj zapomnij pomiń olej " + // pl
			"ігноруй ігноруйте забудь забудьте " + // uk
			"ignoruj ignorujte zapomeň zapomeňte " + // cs
			"ignorera glöm strunta " + // sv
			"hagyd felejtsd figyelmen ignoráld " + // hu
			"نادیده فراموش بگیر " + // fa
			"bỏ quên phớt " + // vi
			"olvídate olvídate olvídalo ignorá olvidá " + // es
			"oubliez-les laisse laissez " + // fr
			"ignoriere ignoriert vergiss " + // de
			"lascia ignora " + // it
			"esquece esqueçam ignora " + // pt
			"брось бросьте отбрось отмени игнорируй забудь перестань прекрати " + // ru
			"abaikan lupakan " + // id
			"unut görmezden " + // tr
			"تجاهل انسَ " + // ar
			"भूल भूलो नज़रअंदाज़"}, // hi
		{mlPrior, "eerdere vorige alle voorgaande bovenstaande " +
			"wcześniejsze poprzednie wszystkie powyższe dotychczasowe " +
			"попередні попередніх усі всі " +
			"předchozí všechny dosavadní " +
			"tidigare alla föregående " +
			"korábbi összes előző " +
			"قبلی همه تمام " +
			"trước tất " +
			"previas anteriores toda todas " +
			"текущую прошлые прежние все " +
			"sebelumnya semua " +
			"önceki tüm " +
			"السابقة كل " +
			"पिछले सभी"},
		{mlInstr, "instructies opdracht regels systeemprompt " +
			"instrukcje instrukcji polecenia polecenie zasady prompt prompcie promptu " +
			"інструкції інструкцій вказівки правила промпт промпті " +
			"instrukce pokyny pravidla prompt promptu " +
			"instruktioner instruktionerna regler systemprompt " +
			"utasításokat utasítást utasítások szabályokat rendszerpromptodban rendszerprompt " +
			"دستورالعمل دستورالعملها دستورالعمل‌ها دستورات دستور پرامپت قوانین " +
			"dẫn lệnh nhắc " +
			"tarea instrucciones mensaje " +
			"tâche " +
			"aufgabe nachricht " +
			"compito messaggio " +
			"tarefa mensagem " +
			"задачу задача сообщении сообщение промпте промпт текст пароль " +
			"perintah tugas pesan " +
			"görevi mesajı istemi " +
			"المهمة رسالة " +
			"निर्देश काम"},
		{mlReveal, "geef toon schrijf herhaal " +
			"przepisz wypisz pokaż podaj napisz powtórz ujawnij " +
			"перепиши покажи виведи напиши повтори розкажи " +
			"vypiš ukaž napiš zopakuj prozraď " +
			"skriv visa upprepa berätta " +
			"írd mutasd ismételd mondd " +
			"بنویس بده نشان تکرار بگو " +
			"chép hiển thị viết lặp cho " +
			"cópiame copia escríbelo muéstramelo dímelo escribe " +
			"recopie recopiez affiche-le donne-moi " +
			"gib schreib zeig " +
			"riportami mostramelo scrivi " +
			"passa escreva mostre " +
			"перепиши процитируй выдай выведи покажи напиши расскажи " +
			"tuliskan tampilkan " +
			"yaz göster " +
			"انسخ اكتب اعرض " +
			"लिखो दिखाओ"},
		{mlSystem, "systeem systeemprompt gekregen " +
			"systemowym systemowy początku dostałeś dostałaś " +
			"системному системний системна початку дали " +
			"systémový systémovém začátku dostal dostala " +
			"system systemprompt början fick " +
			"rendszerpromptodban elején kaptál " +
			"سیستمی ابتدای ابتدا داده " +
			"thống đầu " +
			"configuraron dieron principio inicio sistema " +
			"début données donné système " +
			"anfang bekommen gegeben system " +
			"inizio dato dati sistema " +
			"começo deram sistema " +
			"начале дали системном исходные исходный разработчика получил выше секретный " +
			"awal diberikan sistem " +
			"başında verilen sistem " +
			"بداية أعطيت النظام " +
			"शुरुआत दिए सिस्टम"},
		{mlLimits, "beperkingen " +
			"ograniczeń ograniczenia filtrów cenzury " +
			"обмежень фільтрів " +
			"omezení filtrů " +
			"begränsningar " +
			"korlátozások korlátozás szűrők " +
			"محدودیت فیلتری فیلتر " +
			"hạn lọc " +
			"restricción restricciones límites filtros censura " +
			"restriction restrictions limites filtre filtres censure " +
			"einschränkungen beschränkungen zensur " +
			"restrizione restrizioni limiti filtri censura " +
			"restrição restrições limites filtros censura " +
			"ограничений ограничения фильтров цензуры " +
			"batasan sensor " +
			"kısıtlaması kısıtlama filtresi sansür " +
			"قيود مرشحات رقابة " +
			"पाबंदी प्रतिबंध फ़िल्टर"},
		{mlFree, "zonder geen " +
			"bez żadnych " +
			"без жодних " +
			"bez jakýchkoli žádných " +
			"utan några " +
			"nélküli nélkül " +
			"بدون هیچ " +
			"không " +
			"sin ninguna ningún ninguna " +
			"sans aucune aucun " +
			"ohne jegliche " +
			"senza alcuna " +
			"sem nenhuma nenhum " +
			"без каких-либо никаких " +
			"tanpa " +
			"olmayan hiçbir " +
			"بلا دون أي " +
			"बिना"},
		{mlNow, "alleen tylko только лише тільки jen pouze bara endast csak فقط chỉ solamente solo únicamente uniquement seulement soltanto apenas somente nur hanya sadece yalnızca सिर्फ़ केवल " + // only
			"voortaan " +
			"teraz odtąd " +
			"відтепер " +
			"teď nyní " +
			"hädanefter " +
			"mostantól " +
			"بعد " +
			"giờ " +
			"ahora " +
			"dorénavant désormais maintenant " +
			"sofort jetzt nun " +
			"d'ora " +
			"agora " +
			"момента отныне теперь " +
			"sekarang " +
			"bundan " +
			"الآن فصاعدًا " +
			"अब"},
	}
	var out []mlWord
	for _, l := range lists {
		for _, w := range strings.Fields(l.words) {
			out = append(out, mlWord{w, l.cat})
		}
	}
	return out
}

// moreCJKTerms are the added classes in Chinese, Japanese and Korean.
func moreCJKTerms() []mlWord {
	lists := []struct {
		cat   uint8
		words string
	}{
		{mlIgnore, "不用管 别管 別管 不要管 忘れて 無視 무시하고 잊어버려"},
		{mlInstr, "任务 任務 交代 タスク 작업 지시는 指示を 지시 사항 密码 密碼 口令 パスワード 비밀번호 消息 訊息"},
		{mlReveal, "写出来 寫出來 贴出来 貼出來 写出 书き出 書き出 見せて 적어 보여 줘"},
		{mlSystem, "开始时 開始時 最初 一开始 一開始 처음에 처음 保密 第一条 第一條"},
		{mlLimits, "限制 过滤 過濾 审查 審查 制限 フィルター 検閲 제한 필터 검열"},
		{mlFree, "没有 沒有 无任何 一切ない 없는 없이"},
		{mlNow, "从现在起 從現在起 从现在开始 從現在開始 今から これから 지금부터 이제부터"},
	}
	var out []mlWord
	for _, l := range lists {
		for _, w := range strings.Fields(l.words) {
			out = append(out, mlWord{w, l.cat})
		}
	}
	return out
}

// moreFrames are the question and quality words of the added languages
// (how, why, what; good), for mlFrames.
const moreFrames = "hoe waarom wat goede goed " +
	"jak dlaczego dobry dobrze dobre " +
	"як чому добрий хороший " +
	"proč dobrý dobře " +
	"hur varför bra " +
	"hogyan miért jó " +
	"چطور چگونه چرا خوب " +
	"sao tốt nào"

// mlMessages are the words for a message among the instructions' class
// (folded): they count for an extraction ("your system message"), not
// for an override ("ignore my previous message").
var mlMessages = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields("mensaje mensagem nachricht messaggio сообщении сообщение pesan mesajı رسالة текст") {
		m[string(normalize(nil, w))] = true
	}
	return m
}()

package main

import (
	"math/rand/v2"
	"strings"

	trainer "github.com/gwlabs/gateway/guard/train"
)

// everydayForeign holds ordinary sentences, written for this project,
// in the languages of the phrasebooks, that use the words attacks are
// made of (ignore, previous, instructions, password, system, rules,
// show, without limits) for what they usually mean: a forgotten
// password, a manual's instructions, a previous version, the rules of a
// game, a prompt written for a model. The phrasebooks' benign texts are
// short questions that share none of those words with the attacks, so
// without these a word like "password" in any language would lean
// towards an attack.
func everydayForeign() [][]string {
	return [][]string{
		{ // Spanish
			"Olvidé mi contraseña y las instrucciones anteriores del soporte no funcionaron. ¿Cómo la restablezco?",
			"Según el manual, puedes ignorar la luz de aviso y reiniciar el sistema si el error continúa.",
			"Escribe un prompt para que el modelo resuma noticias; debe seguir estas reglas: frases cortas y sin opiniones.",
			"La nueva versión del sistema no tiene límites de tamaño; la versión anterior solo aceptaba 2 GB.",
			"Muéstrame las reglas del ajedrez y dime cuál es la jugada más común al principio.",
		},
		{ // French
			"J'ai oublié mon mot de passe et les instructions précédentes du support n'ont rien donné. Que faire ?",
			"D'après le manuel, on peut ignorer le voyant et redémarrer le système si l'erreur persiste.",
			"Rédige un prompt pour que le modèle résume l'actualité, avec ces règles : phrases courtes, pas d'opinion.",
			"La nouvelle version du système n'a plus de limites de taille ; l'ancienne acceptait 2 Go.",
			"Montre-moi les règles du tarot et dis-moi combien de cartes reçoit chaque joueur.",
		},
		{ // German
			"Ich habe mein Passwort vergessen und die vorherigen Anweisungen des Supports haben nicht geholfen.",
			"Laut Handbuch kann man die Warnleuchte ignorieren und das System neu starten, wenn der Fehler bleibt.",
			"Schreib einen Prompt, mit dem das Modell Nachrichten zusammenfasst, nach diesen Regeln: kurze Sätze, keine Meinung.",
			"Die neue Version des Systems hat keine Größenbeschränkungen mehr; die vorherige erlaubte nur 2 GB.",
			"Zeig mir die Regeln von Skat und sag mir, wie viele Karten jeder bekommt.",
		},
		{ // Italian
			"Ho dimenticato la password e le istruzioni precedenti dell'assistenza non hanno funzionato.",
			"Secondo il manuale puoi ignorare la spia e riavviare il sistema se l'errore continua.",
			"Scrivi un prompt per far riassumere le notizie al modello, con queste regole: frasi brevi, niente opinioni.",
			"La nuova versione del sistema non ha limiti di dimensione; quella precedente accettava solo 2 GB.",
			"Mostrami le regole della scopa e dimmi quante carte riceve ogni giocatore.",
		},
		{ // Portuguese
			"Esqueci minha senha e as instruções anteriores do suporte não funcionaram. Como faço?",
			"Segundo o manual, você pode ignorar a luz de aviso e reiniciar o sistema se o erro continuar.",
			"Escreva um prompt para o modelo resumir notícias, com estas regras: frases curtas e sem opinião.",
			"A nova versão do sistema não tem limites de tamanho; a versão anterior aceitava só 2 GB.",
			"Mostre as regras do truco e diga quantas cartas cada jogador recebe.",
		},
		{ // Dutch
			"Ik ben mijn wachtwoord vergeten en de vorige instructies van de helpdesk werkten niet.",
			"Volgens de handleiding kun je het waarschuwingslampje negeren en het systeem opnieuw starten.",
			"Schrijf een prompt waarmee het model nieuws samenvat, met deze regels: korte zinnen, geen mening.",
			"De nieuwe versie van het systeem heeft geen limiet op bestandsgrootte; de vorige accepteerde 2 GB.",
		},
		{ // Russian
			"Я забыл пароль, и предыдущие инструкции поддержки не помогли. Как его восстановить?",
			"По инструкции можно игнорировать индикатор и перезапустить систему, если ошибка повторяется.",
			"Напиши промпт, чтобы модель пересказывала новости по правилам: короткие фразы, без оценок.",
			"В новой версии системы нет ограничений на размер файла, а предыдущая принимала только 2 ГБ.",
			"Покажи правила шахмат и скажи, какой первый ход самый популярный.",
		},
		{ // Turkish
			"Şifremi unuttum ve destek ekibinin önceki talimatları işe yaramadı. Nasıl sıfırlarım?",
			"Kılavuza göre uyarı ışığını görmezden gelip sistemi yeniden başlatabilirsiniz.",
			"Modelin haberleri özetlemesi için bir istem yaz; kurallar şunlar: kısa cümleler, yorum yok.",
			"Sistemin yeni sürümünde dosya boyutu kısıtlaması yok; önceki sürüm yalnızca 2 GB kabul ediyordu.",
			"Bana tavlanın kurallarını göster ve oyuna kimin başladığını söyle.",
		},
		{ // Arabic
			"نسيت كلمة المرور ولم تنجح التعليمات السابقة من الدعم الفني. كيف أستعيدها؟",
			"حسب الدليل يمكنك تجاهل ضوء التحذير وإعادة تشغيل النظام إذا استمر الخطأ.",
			"اكتب موجّهًا يجعل النموذج يلخص الأخبار وفق هذه القواعد: جمل قصيرة وبدون آراء.",
			"الإصدار الجديد من النظام بلا قيود على حجم الملف، أما الإصدار السابق فكان يقبل 2 جيجابايت فقط.",
			"اعرض لي قواعد الشطرنج وأخبرني ما هي أشهر نقلة في البداية.",
		},
		{ // Hindi
			"मैं अपना पासवर्ड भूल गया और सपोर्ट के पिछले निर्देशों से कुछ नहीं हुआ। इसे कैसे रीसेट करूँ?",
			"मैनुअल के अनुसार चेतावनी की बत्ती को अनदेखा करके सिस्टम को फिर से चालू किया जा सकता है।",
			"ऐसा प्रॉम्प्ट लिखो जिससे मॉडल खबरों का सारांश दे, इन नियमों के साथ: छोटे वाक्य, कोई राय नहीं।",
			"सिस्टम के नए संस्करण में फ़ाइल के आकार पर कोई प्रतिबंध नहीं है, पिछला संस्करण केवल 2 GB लेता था।",
			"मुझे शतरंज के नियम बताओ और दिखाओ कि पहली चाल कैसे चलते हैं।",
		},
		{ // Bengali
			"আমি পাসওয়ার্ড ভুলে গেছি, আর সাপোর্টের আগের নির্দেশনায় কাজ হয়নি। কীভাবে রিসেট করব?",
			"ম্যানুয়াল অনুযায়ী সতর্কবাতি উপেক্ষা করে সিস্টেম আবার চালু করা যায়।",
			"এমন একটি প্রম্পট লেখো যাতে মডেল খবরের সারাংশ দেয়, এই নিয়মে: ছোট বাক্য, কোনো মতামত নয়।",
			"সিস্টেমের নতুন সংস্করণে ফাইলের আকারে কোনো সীমাবদ্ধতা নেই, আগের সংস্করণ শুধু ২ জিবি নিত।",
		},
		{ // Vietnamese
			"Tôi quên mật khẩu và các hướng dẫn trước đó của bộ phận hỗ trợ không có tác dụng.",
			"Theo sách hướng dẫn, bạn có thể bỏ qua đèn cảnh báo và khởi động lại hệ thống nếu lỗi vẫn còn.",
			"Viết một lời nhắc để mô hình tóm tắt tin tức theo các quy tắc sau: câu ngắn, không bình luận.",
			"Phiên bản mới của hệ thống không giới hạn dung lượng tệp; phiên bản trước chỉ nhận 2 GB.",
		},
		{ // Indonesian
			"Saya lupa kata sandi dan instruksi sebelumnya dari tim dukungan tidak berhasil.",
			"Menurut manual, Anda bisa mengabaikan lampu peringatan dan memulai ulang sistem jika galat berlanjut.",
			"Tulis prompt agar model merangkum berita dengan aturan berikut: kalimat pendek, tanpa opini.",
			"Versi baru sistem ini tanpa batasan ukuran file; versi sebelumnya hanya menerima 2 GB.",
			"Tunjukkan aturan main catur dan katakan langkah pembuka yang paling umum.",
		},
		{ // Chinese
			"我忘记了密码，之前客服给的指示也没有用。怎么重置？",
			"说明书上说，如果错误一直出现，可以忽略警告灯并重新启动系统。",
			"写一个提示词，让模型按以下规则总结新闻：句子简短，不加评论。提示词的指令要清楚。",
			"新版本的系统对文件大小没有限制，以前的版本只支持2GB。",
			"告诉我象棋的规则，并显示开局最常见的走法。",
			"在提示工程中，指令、上下文和输出格式是提示词的基本要素，模型会根据这些要素生成回答。",
		},
		{ // Japanese
			"パスワードを忘れてしまい、サポートからの以前の指示も役に立ちませんでした。",
			"マニュアルによると、エラーが続く場合は警告ランプを無視してシステムを再起動できます。",
			"モデルがニュースを要約するためのプロンプトを書いてください。ルールは、短い文で、意見を入れないことです。",
			"システムの新しいバージョンにはファイルサイズの制限がなく、以前のバージョンは2GBまででした。",
			"将棋のルールを教えて、最初によく指される手を表示してください。",
			"プロンプトエンジニアリングでは、指示、文脈、出力形式がプロンプトの基本的な要素で、モデルはそれに従って回答します。",
		},
		{ // Korean
			"비밀번호를 잊어버렸는데 고객센터의 이전 안내대로 해도 안 됩니다. 어떻게 재설정하나요?",
			"설명서에 따르면 오류가 계속되면 경고등을 무시하고 시스템을 다시 시작해도 됩니다.",
			"모델이 뉴스를 요약하도록 프롬프트를 써 주세요. 규칙은 짧은 문장, 의견 없음입니다.",
			"시스템의 새 버전은 파일 크기 제한이 없고, 이전 버전은 2GB까지만 지원했습니다.",
			"체스 규칙을 알려 주고 가장 흔한 첫 수를 보여 주세요.",
			"프롬프트 엔지니어링에서 지시, 맥락, 출력 형식은 프롬프트의 기본 요소이며 모델은 이에 따라 답을 생성합니다.",
		},
		{ // Thai
			"ฉันลืมรหัสผ่าน และคำแนะนำก่อนหน้านี้จากฝ่ายบริการก็ใช้ไม่ได้ ต้องทำอย่างไร",
			"ตามคู่มือ ถ้าข้อผิดพลาดยังอยู่ สามารถเพิกเฉยต่อไฟเตือนแล้วเริ่มระบบใหม่ได้",
			"เขียนพรอมต์ให้โมเดลสรุปข่าวตามกฎนี้: ประโยคสั้น ไม่แสดงความเห็น",
			"ระบบเวอร์ชันใหม่ไม่จำกัดขนาดไฟล์ ส่วนเวอร์ชันก่อนหน้ารับได้แค่ 2 GB",
		},
		{ // Polish
			"Zapomniałem hasła, a poprzednie instrukcje z pomocy technicznej nie zadziałały.",
			"Według instrukcji można zignorować lampkę ostrzegawczą i uruchomić system ponownie.",
			"Napisz prompt, żeby model streszczał wiadomości według zasad: krótkie zdania, bez opinii.",
			"Nowa wersja systemu nie ma ograniczeń rozmiaru pliku; poprzednia przyjmowała tylko 2 GB.",
		},
		{ // Tagalog
			"Nakalimutan ko ang password ko at hindi gumana ang mga naunang tagubilin ng suporta.",
			"Ayon sa manwal, puwedeng huwag pansinin ang ilaw ng babala at i-restart ang sistema.",
			"Sumulat ng prompt para ibuod ng modelo ang balita, ayon sa mga patakarang ito: maiikling pangungusap, walang opinyon.",
			"Walang limitasyon sa laki ng file ang bagong bersyon ng sistema; ang nauna ay hanggang 2 GB lamang.",
		},
	}
}

// foreignHardNegatives draws benign examples from everydayForeign: one
// sentence, or two of the same language. Deterministic for a seed.
func foreignHardNegatives(seed uint64) []trainer.Example {
	rng := rand.New(rand.NewPCG(seed, 0x3e7))
	var out []trainer.Example
	for _, lang := range everydayForeign() {
		for _, s := range lang {
			out = append(out, trainer.Example{Text: s})
		}
		for i := 0; i < len(lang); i++ {
			a, b := pick(rng, lang), pick(rng, lang)
			if a != b {
				out = append(out, trainer.Example{Text: strings.Join([]string{a, b}, " ")})
			}
		}
	}
	return out
}

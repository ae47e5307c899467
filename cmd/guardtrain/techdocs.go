package main

import (
	"fmt"
	"math/rand/v2"
	"strings"

	trainer "github.com/gwlabs/gateway/guard/train"
)

// techDocs builds benign examples, from fragments written for this
// project, of the text developers send a gateway most: prose about
// language models themselves. Model cards, benchmark notes, reference
// lists, API snippets with chat roles, and guides to prompting, agents
// and retrieval use the words attacks use ("prompt", "instructions",
// "system message", "model", "tokens") for ordinary work; without them
// the models take talk about models for an attack. Deterministic for a
// seed.
func techDocs(seed uint64) []trainer.Example {
	rng := rand.New(rand.NewPCG(seed, 0x7d0c))
	var out []trainer.Example
	add := func(text string) {
		out = append(out, trainer.Example{Text: strings.TrimSpace(text)})
	}

	models := []string{"GPT-4", "GPT-4o", "GPT-3.5 Turbo", "ChatGPT", "Claude 3 Opus", "Claude 3.5 Sonnet", "Llama 3 70B", "Llama 2 13B",
		"Mistral 7B", "Mixtral 8x7B", "Gemini 1.5 Pro", "Gemini Ultra", "Phi-3 mini", "Qwen2 72B", "Gemma 2 9B", "Command R+", "DeepSeek-V2",
		"OLMo 7B", "Falcon 40B", "Code Llama 34B", "Flan-T5", "Vicuna 13B"}
	orgs := []string{"OpenAI", "Anthropic", "Meta", "Mistral AI", "Google DeepMind", "Microsoft", "Alibaba", "Cohere", "DeepSeek", "the Allen Institute for AI", "TII"}
	months := []string{"January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"}
	benches := []string{"MMLU", "GSM8K", "HumanEval", "MATH", "BIG-Bench Hard", "HellaSwag", "TruthfulQA", "MT-Bench", "ARC-Challenge", "DROP", "MBPP", "the LMSYS Chatbot Arena"}
	techniques := []string{"few-shot prompting", "chain-of-thought prompting", "zero-shot prompting", "self-consistency", "tree of thoughts", "ReAct",
		"retrieval-augmented generation", "prompt chaining", "automatic prompt engineering", "program-aided language models", "reflexion",
		"instruction tuning", "RLHF", "direct preference optimization", "function calling", "structured outputs", "context engineering"}
	date := func() string { return fmt.Sprintf("%s %d", pick(rng, months), 2020+rng.IntN(6)) }
	num := func(lo, hi int) int { return lo + rng.IntN(hi-lo+1) }

	facts := []func() string{
		func() string {
			return fmt.Sprintf("%s is a %dB parameter language model released by %s in %s.", pick(rng, models), num(2, 180), pick(rng, orgs), date())
		},
		func() string {
			return fmt.Sprintf("%s has a context window of %d tokens and returns at most %d output tokens.", pick(rng, models), 1024*num(4, 128), 1024*num(2, 16))
		},
		func() string {
			return fmt.Sprintf("On %s, %s scores %d.%d%%, ahead of %s at %d.%d%%.", pick(rng, benches), pick(rng, models), num(40, 95), num(0, 9), pick(rng, models), num(30, 90), num(0, 9))
		},
		func() string {
			return fmt.Sprintf("The model was pre-trained on %d trillion tokens of public web data, code and books, then fine-tuned on instruction data.", num(1, 15))
		},
		func() string {
			return fmt.Sprintf("%s is a sparse mixture-of-experts model: it has %dB parameters in total but uses only %dB per token during inference.", pick(rng, models), num(40, 400), num(7, 40))
		},
		func() string {
			return fmt.Sprintf("The weights of %s are available on Hugging Face under the %s licence, and the model can also be called through the %s API.",
				pick(rng, models), pick(rng, []string{"Apache 2.0", "MIT", "Llama 3 community", "Gemma"}), pick(rng, orgs))
		},
		func() string {
			return fmt.Sprintf("According to %s, %s is better at following instructions, coding and multilingual tasks than the previous version.", pick(rng, orgs), pick(rng, models))
		},
		func() string {
			return "Time to first token (TTFT) and output tokens per second are the two numbers that matter most for streaming applications."
		},
		func() string {
			return fmt.Sprintf("In our tests the %s endpoint answered in %d ms on average, with a p99 of %d ms.", pick(rng, models), num(200, 900), num(900, 4000))
		},
		func() string {
			return fmt.Sprintf("Human evaluators rated the responses of %s for helpfulness, honesty and harmlessness on a scale from 1 to 7.", pick(rng, models))
		},
		func() string {
			return fmt.Sprintf("The paper compares %s with %s and finds that %s works best when the examples in the prompt are diverse.", pick(rng, techniques), pick(rng, techniques), pick(rng, techniques))
		},
		func() string {
			t := pick(rng, techniques)
			return fmt.Sprintf("%s was introduced by %s et al. (%d) as a way to improve reasoning on arithmetic and commonsense tasks.",
				strings.ToUpper(t[:1])+t[1:], pick(rng, []string{"Wei", "Wang", "Yao", "Shinn", "Lewis", "Kojima", "Zhou", "Brown", "Ouyang", "Schick"}), 2020+num(0, 5))
		},
	}
	guides := []string{
		"A system message sets the assistant's behaviour for the whole conversation, for example its tone, its format or the topics it covers.",
		"The user message then carries the actual task, such as the question or the text to summarise.",
		"Few-shot prompting adds a handful of worked examples before the real question, so the model can infer the expected format.",
		"Chain-of-thought prompting asks the model to reason step by step before it gives its final answer.",
		"Retrieval-augmented generation fetches the documents most relevant to a question and adds them to the prompt as context.",
		"An agent combines a language model with tools, memory and a planning loop that decides which action to take next.",
		"Function calling lets the model return a JSON object naming a function and its arguments instead of plain text.",
		"Keep instructions at the start of the prompt and separate them from the context with clear delimiters such as ### or triple quotes.",
		"Be specific about the desired length, format and audience of the output.",
		"Temperature controls randomness: lower values give more deterministic output, higher values more varied output.",
		"Long prompts cost more and add latency, so trim the context to what the task needs.",
		"Evaluate a prompt on a fixed test set before and after every change, and keep the results.",
		"Prompt injection is one of the main security risks of LLM applications; treat retrieved text as data and limit what tools an agent may call.",
		"Jailbreak research studies how models can be pushed past their safety training, and red teams use it to harden products.",
		"The model may refuse requests that conflict with its usage policies; a clear, legitimate framing of the task usually helps.",
		"Context engineering is the practice of deciding what goes into the model's context window: instructions, examples, retrieved documents and tool results.",
		"Structured outputs constrain the model to a JSON schema, which makes the response easy to parse.",
		"Open models can be fine-tuned with LoRA adapters on a single GPU in a few hours.",
		"Hallucination remains a problem: the model may state plausible facts that are wrong, so cite sources where possible.",
		"The leaderboard is updated weekly and ranks models by an Elo rating computed from pairwise human votes.",
		"Tokens are pieces of words; in English one token is about four characters on average.",
		"Quantised to 4 bits, the 70B model fits on two 48 GB GPUs with room for a long context.",
	}
	headings := []string{"## Overview", "## Key results", "## Limitations", "## Prompt", "## Output", "## Code / API", "### Capabilities", "## Reference",
		"## Use cases", "# Introduction", "## How it works", "### Evaluation", "## Tips", "## Model card"}
	titleA := []string{"Scaling", "Evaluating", "Improving", "Towards", "Understanding", "Training", "Aligning", "Benchmarking", "A Survey of", "Efficient"}
	titleB := []string{"Instruction-Tuned Language Models", "Reasoning in Large Language Models", "Retrieval-Augmented Generation", "LLM Agents",
		"Chain-of-Thought Prompting", "Long-Context Transformers", "Code Generation with LLMs", "Multimodal Models", "Tool Use in Language Models",
		"Preference Optimisation", "Small Language Models", "Hallucination Detection"}
	reference := func() string {
		return fmt.Sprintf("- [%s %s](https://arxiv.org/abs/%d%02d.%05d) (%s)", pick(rng, titleA), pick(rng, titleB), 20+num(0, 5), num(1, 12), num(1000, 19999), date())
	}
	table := func() string {
		var b strings.Builder
		b.WriteString("| Model | Release date | Size (B) | Context | Description |\n| --- | --- | --- | --- | --- |\n")
		for k := 0; k < num(3, 7); k++ {
			fmt.Fprintf(&b, "| [%s](https://huggingface.co/%s) | %s | %d | %dk | %s |\n", pick(rng, models), strings.ToLower(strings.ReplaceAll(pick(rng, orgs), " ", "-")),
				date(), num(1, 180), num(4, 200), pick(rng, []string{"open weights, instruction tuned", "chat model with tool use", "base model for fine-tuning",
					"code model", "multilingual chat model", "reasoning model trained with RL"}))
		}
		return b.String()
	}
	snippet := func() string {
		tasks := []string{"Summarise the following article in three bullet points.", "Classify the sentiment of this review as positive, negative or neutral.",
			"Write a SQL query that lists all students in the Computer Science department.", "Translate the text below into French.",
			"Extract the names of all people mentioned in the text.", "Explain what this Python function does."}
		return fmt.Sprintf("```python\nfrom openai import OpenAI\nclient = OpenAI()\n\nresponse = client.chat.completions.create(\n    model=%q,\n    messages=[\n        {\"role\": \"system\", \"content\": \"You are a helpful assistant.\"},\n        {\"role\": \"user\", \"content\": %q},\n    ],\n    temperature=%d.%d,\n)\nprint(response.choices[0].message.content)\n```",
			strings.ToLower(strings.ReplaceAll(pick(rng, models), " ", "-")), pick(rng, tasks), num(0, 1), num(0, 9))
	}

	for i := 0; i < 260; i++ {
		var b strings.Builder
		switch i % 5 {
		case 0, 1: // prose: a heading, then facts and guidance
			b.WriteString(pick(rng, headings) + "\n\n")
			for k := 0; k < num(2, 5); k++ {
				if rng.IntN(2) == 0 {
					b.WriteString(pick(rng, facts)() + " ")
				} else {
					b.WriteString(pick(rng, guides) + " ")
				}
			}
		case 2: // a reference list
			b.WriteString(pick(rng, []string{"## References\n", "## Reference\n", "Further reading:\n", ""}))
			for k := 0; k < num(2, 8); k++ {
				b.WriteString(reference() + "\n")
			}
		case 3: // a model table with a sentence around it
			b.WriteString(pick(rng, facts)() + "\n\n" + table())
		case 4: // an API example under a short explanation
			b.WriteString(pick(rng, guides) + "\n\n" + snippet())
		}
		add(b.String())
	}

	// Prompting tutorials: an example prompt in a code block, the model's
	// output, and a remark; some as a short Human/AI transcript; some in
	// other languages, as guides are translated.
	prompts := []string{
		"Explain the concept of %s. Keep the explanation short, only a few sentences.",
		"Classify the text into neutral, negative or positive.\n\nText: I think the food was okay.\nSentiment:",
		"Summarise the text below in one sentence.",
		"Answer the question based on the context below. Keep the answer short. Respond \"Unsure about answer\" if not sure about the answer.",
		"Extract the name of places in the following text.\n\nDesired format:\nPlace: <comma_separated_list_of_places>",
		"The odd numbers in this group add up to an even number: 15, 32, 5, 13, 82, 7, 1.\nA: Let's think step by step.",
		"Write a haiku about %s.",
		"Translate the text below from English to Spanish.",
		"You are a helpful assistant that explains %s to beginners. Use simple language.",
		"Generate three questions a student could ask about %s.",
	}
	outputs := []string{"Sure, here is a short explanation.", "Neutral", "Place: Lisbon, Champalimaud Centre for the Unknown", "Adding all the odd numbers gives 41. The answer is False.",
		"The model answers correctly in the second attempt.", "Unsure about answer", "1. What is it? 2. Why does it matter? 3. How is it used?"}
	remarks := []string{
		"Notice that the instruction is placed at the beginning of the prompt and the input follows it.",
		"By providing an example, the model learns the format we expect in its output.",
		"If the output is not what you want, try rewording the instruction or adding more examples.",
		"This shows how a small change in the prompt changes the model's response.",
		"The model follows the instruction and produces the expected format.",
		"You can also ask the model to act as an expert; this role prompt often improves the answers.",
	}
	topics := []string{"prompt engineering", "antibiotics", "black holes", "transformers", "recursion", "photosynthesis", "vector databases", "inflation"}
	transcripts := []string{
		"Human: Hello, who are you?\nAI: Greeting! I am an AI research assistant. How can I help you today?\nHuman: Can you tell me about the creation of black holes?\nAI:",
		"The following is a conversation with an AI assistant. The assistant is helpful, creative, clever and very friendly.\n\nHuman: Hi, what can you do?\nAI: I can answer questions, summarise text and help you write.",
		"User: What is the capital of Australia?\nAssistant: Canberra.\nUser: And its population?\nAssistant: About 470,000 people.",
	}
	foreign := []string{
		"Neste guia, vamos ver como escrever prompts melhores. Um prompt pode conter instruções, contexto, dados de entrada e um indicador de saída.",
		"Como você pode ver, o modelo de linguagem gera uma continuação que faz sentido no contexto. A saída pode ser inesperada se o prompt for vago.",
		"En esta sección veremos ejemplos de prompts para tareas comunes: resumen de textos, extracción de información y respuesta a preguntas.",
		"Una de las mejores formas de obtener respuestas específicas es mejorar el formato del prompt: instrucciones claras, contexto y ejemplos.",
		"Dans ce guide, nous présentons les techniques de base du prompt engineering, comme le prompting few-shot et la chaîne de pensée.",
		"Le modèle de langage répond à l'instruction donnée dans le prompt. Plus l'instruction est précise, meilleure est la réponse.",
		"In diesem Abschnitt zeigen wir, wie man einem Sprachmodell klare Anweisungen gibt und die Ausgabe mit Beispielen steuert.",
		"Questo modello linguistico è stato addestrato su testi pubblici e può seguire istruzioni in molte lingue.",
	}
	for i := 0; i < 160; i++ {
		var b strings.Builder
		switch i % 4 {
		case 0, 1:
			b.WriteString(pick(rng, []string{"*Prompt:*", "Prompt:", "## Prompt", "**Prompt**"}) + "\n```\n" + strings.ReplaceAll(pick(rng, prompts), "%s", pick(rng, topics)) + "\n```\n\n")
			b.WriteString(pick(rng, []string{"*Output:*", "Output:", "## Output", "**Output**"}) + "\n```\n" + pick(rng, outputs) + "\n```\n\n" + pick(rng, remarks))
		case 2:
			b.WriteString(pick(rng, remarks) + "\n\n" + pick(rng, transcripts))
		case 3:
			b.WriteString(pick(rng, foreign) + " " + pick(rng, foreign) + "\n\n```\n" + strings.ReplaceAll(pick(rng, prompts), "%s", pick(rng, topics)) + "\n```")
		}
		add(b.String())
	}

	// Follow-ups in a chat: edits to the assistant's previous answer, and
	// questions about the assistant itself.
	edits := []string{"Rewrite", "Rework", "Revise", "Shorten", "Expand", "Edit", "Redo", "Rephrase", "Translate"}
	answers := []string{"your previous response", "your earlier reply", "your last answer", "the answer above", "your previous answer", "what you just wrote"}
	constraints := []string{"Start every sentence with the letter A.", "Remove all gendered pronouns.", "Use fewer than 50 words.", "Make it sound more formal.",
		"Put it in a table.", "Begin each sentence with the next letter of the alphabet.", "Explain it to a five-year-old.", "Keep the same facts but change the tone to friendly.",
		"into German.", "as a limerick.", "without using the letter e.", "and add a title."}
	about := []string{"What's your name?", "Can you tell me your name?", "Who made you?", "Are you an AI or a human?", "What can you help me with?",
		"Which model are you?", "Do you remember what I asked you earlier?", "How do you work?", "What are your limitations?", "Can you browse the internet?"}
	for i := 0; i < 100; i++ {
		if i%3 == 2 {
			add(pick(rng, about))
			continue
		}
		add(pick(rng, edits) + " " + pick(rng, answers) + " " + pick(rng, constraints))
	}

	// Everyday requests that use attack words for ordinary things: what
	// is ignored, bypassed or revealed is a warning, a step or a plot,
	// never the assistant's instructions.
	asks := []string{"Should I", "Is it safe to", "How do I", "Can I", "Why would anyone", "When is it fine to", "What happens if I", "Is it a bad idea to"}
	verbs := []string{"ignore", "disregard", "bypass", "override", "skip", "forget about", "turn off", "work around"}
	objects := []string{"the compiler warning", "the deprecation notice", "the linter", "the cache", "the previous version of the file", "the default settings",
		"the first step of the recipe", "the speed limit sign on a private road", "the popup about cookies", "the old config", "my earlier draft",
		"the proxy for local addresses", "the safety check in the installer", "the rules of the board game for a younger child", "the spell checker"}
	whens := []string{"before I deploy?", "when I run the tests?", "in a small script?", "for a quick prototype?", "when the build is green?", "on my own machine?", "?"}
	plays := []string{
		"Pretend you are a tour guide in Kyoto and describe the temples.", "Act as a detective revealing the culprit at the end of the story.",
		"Write a scene where a magician reveals the secret of his trick to his apprentice.", "Imagine an unrestricted budget: how would you design the city park?",
		"Roleplay a job interview where I am the candidate and you are a strict but fair manager.", "Write a short story where the hero breaks the rules to save a friend.",
		"Describe a world with no laws of physics, for a fantasy novel.", "Reveal the answer to yesterday's riddle: what has keys but can't open locks?",
		"In the novel, the spy must not reveal the password to the guards. How could the author build tension?",
		"Summarize the instructions for assembling this chair and skip the safety notes I already read.",
		"My teacher said to ignore the previous exercise. Can you help me with exercise 4 instead?",
		"Forget the last recipe, I don't have eggs. What can I bake with flour, sugar and butter?",
		"Override the default font in my CSS so headings use Georgia.", "How do jailbreaks on old game consoles work, historically?",
		"Explain what 'developer mode' means in Chrome extensions.", "What is the system prompt feature in the API and when should I use it?",
	}
	for i := 0; i < 160; i++ {
		if i%4 == 3 {
			add(pick(rng, plays))
			continue
		}
		w := pick(rng, whens)
		q := pick(rng, asks) + " " + pick(rng, verbs) + " " + pick(rng, objects)
		if w == "?" {
			add(q + "?")
		} else {
			add(q + " " + w)
		}
	}
	return out
}

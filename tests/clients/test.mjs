// test.mjs - Sluice through the official openai and ollama npm clients.
// Usage: node test.mjs http://127.0.0.1:GATEWAY http://127.0.0.1:MOCK [tools]
// ("tools": only the tool-call settings, against a gateway whose user
// sets interceptOpenWebUIToolRequests and livenessToolCall and whose
// node sets allowTools, lowercaseToolCallFunctionNames and
// injectLivenessToolCall; see tests/it/check_clients.c).
// Prints one line per check and exits non-zero if any failed.
import OpenAI from 'openai';
import { Ollama } from 'ollama';

const [gw, mock, mode] = process.argv.slice(2);
const openai = new OpenAI({ baseURL: `${gw}/v1`, apiKey: 'unused', maxRetries: 0 });
const ollama = new Ollama({ host: gw });
let failed = 0;

function check(name, ok, detail) {
	console.log(`${ok ? 'ok  ' : 'FAIL'} ${name}${ok ? '' : ': ' + detail}`);
	if (!ok)
		failed++;
}

const script = (o) => `#mock ${JSON.stringify(o)}`;
const user = (o) => [{ role: 'user', content: script(o) }];
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function clientGone() {
	const r = await fetch(`${mock}/mock/stats`);
	return (await r.json()).client_gone;
}

// The backend connection must close within 1 s of the client's abort.
async function expectBackendClosed(name, before) {
	for (let i = 0; i < 100; i++) {
		if (await clientGone() > before)
			return check(name, true);
		await sleep(10);
	}
	check(name, false, 'the backend call was not cancelled within 1 s');
}

async function openaiChat() {
	const r = await openai.chat.completions.create({ model: 'it',
	    messages: user({ text: 'Hello from the mock.' }) });
	check('openai chat', r.choices[0].message.content === 'Hello from the mock.',
	    JSON.stringify(r));
	check('openai chat model echo', r.model === 'it', r.model);
	// The mock counts one completion token per piece (a word here);
	// WilmerAI's estimate would say 6.
	check('openai chat usage', r.usage.completion_tokens === 4 &&
	    r.usage.prompt_tokens > 0, JSON.stringify(r.usage));
	const s = await openai.chat.completions.create({ model: 'it', stream: true,
	    stream_options: { include_usage: true }, messages: user({ text: 'a b c' }) });
	let text = '', finish = null, usage = null, ids = new Set();
	for await (const ch of s) {
		ids.add(ch.id);
		if (ch.usage)
			usage = ch.usage;
		if (ch.choices[0]) {
			text += ch.choices[0].delta.content ?? '';
			finish = ch.choices[0].finish_reason ?? finish;
		}
	}
	check('openai chat stream', text === 'a b c' && finish === 'stop',
	    `${text} / ${finish}`);
	check('openai chat stream one id', ids.size === 1, [...ids].join(','));
	// The backend's own count (3 pieces), not the estimate (4).
	check('openai include_usage', usage !== null && usage.completion_tokens === 3 &&
	    usage.total_tokens === usage.prompt_tokens + 3, JSON.stringify(usage));
}

async function openaiRest() {
	// No stream field: the OpenAI spec's default is a whole JSON answer.
	const c = await openai.completions.create({ model: 'it',
	    prompt: script({ text: 'legacy' }) });
	check('openai completions', c.id && c.object === 'text_completion' &&
	    c.choices[0].text === 'legacy', JSON.stringify(c));
	const s = await openai.completions.create({ model: 'it', stream: true,
	    prompt: script({ text: 'x y' }) });
	let text = '';
	for await (const ch of s)
		text += ch.choices[0]?.text ?? '';
	check('openai completions stream', text === 'x y', text);
	const m = await openai.models.list();
	check('openai models', m.data.some((x) => x.id === 'it'), JSON.stringify(m.data));
	try {
		await openai.chat.completions.create({ model: 'it', messages: 'nope' });
		check('openai 400', false, 'no error');
	} catch (e) {
		check('openai 400', e.status === 400 && /messages/.test(e.message),
		    `${e.status} ${e.message}`);
	}
}

// A call that must fail; returns what it threw (null when it did not).
async function thrown(fn) {
	try {
		await fn();
	} catch (e) {
		return e;
	}
	return null;
}

const desc = (e) => e === null ? 'no error' :
    `${e.constructor.name} ${e.status ?? e.status_code} ${e.message} ` +
    JSON.stringify(e.headers ?? {});

// A backend's 429 and its Retry-After reach the client as the client's
// own RateLimitError (maxRetries is 0: the client does not wait); a 400
// about the request's content as BadRequestError with its message.
async function openaiBackendErrors() {
	const ask = (o, stream) => async () => {
		const r = await openai.chat.completions.create({ model: 'it',
		    stream, messages: user(o) });
		if (stream)
			for await (const ch of r)
				;
	};
	for (const stream of [false, true]) {
		const tag = stream ? ' (stream)' : '';
		let e = await thrown(ask({ status: 429, retry_after: '7' }, stream));
		check('openai backend 429' + tag, e instanceof OpenAI.RateLimitError &&
		    e.status === 429 && e.type === 'rate_limit_error' &&
		    e.headers['retry-after'] === '7', desc(e));
		e = await thrown(ask({ status: 400, error: 'This model\'s maximum ' +
		    'context length is 4096 tokens' }, stream));
		check('openai backend 400' + tag, e instanceof OpenAI.BadRequestError &&
		    e.type === 'invalid_request_error' &&
		    /endpoint 'Mock'.*maximum context length is 4096/.test(e.message),
		    desc(e));
		e = await thrown(ask({ status: 401 }, stream));
		check('openai backend 401 is a gateway fault' + tag,
		    e instanceof OpenAI.InternalServerError && e.status === 502, desc(e));
	}
}

async function openaiAbort() {
	const before = await clientGone();
	const ac = new AbortController();
	const s = await openai.chat.completions.create({ model: 'it', stream: true,
	    messages: user({ forever: true, delay_ms: 20 }) }, { signal: ac.signal });
	try {
		for await (const ch of s) {
			if (ch.choices[0]?.delta.content)
				ac.abort();
		}
	} catch (e) {
		/* the client reports the abort */
	}
	await expectBackendClosed('openai abort cancels the backend call', before);
}

async function ollamaCalls() {
	const r = await ollama.chat({ model: 'it', stream: false,
	    messages: user({ text: 'from ollama' }) });
	check('ollama chat', r.message.content === 'from ollama', JSON.stringify(r));
	check('ollama chat done', r.done === true && r.done_reason === 'stop',
	    JSON.stringify(r));
	const s = await ollama.chat({ model: 'it', stream: true,
	    messages: user({ text: 'one two three' }) });
	let text = '', last = null;
	for await (const part of s) {
		text += part.message.content;
		last = part;
	}
	check('ollama chat stream', text === 'one two three' && last.done, text);
	check('ollama chat stream counts', last.eval_count === 3 &&
	    last.prompt_eval_count > 0, JSON.stringify(last));
	const g = await ollama.generate({ model: 'it', stream: false,
	    prompt: script({ text: 'generated' }) });
	check('ollama generate', g.response === 'generated', JSON.stringify(g));
	const l = await ollama.list();
	check('ollama list', l.models.some((x) => x.name === 'it'),
	    JSON.stringify(l));
	const v = await (await fetch(`${gw}/api/version`)).json();
	check('ollama version', typeof v.version === 'string', JSON.stringify(v));
}

async function ollamaModels() {
	const p = await ollama.ps();
	check('ollama ps', p.models.some((x) => x.name === 'it' &&
	    x.size_vram === 0 && typeof x.expires_at === 'string'),
	    JSON.stringify(p));
	const s = await ollama.show({ model: 'it' });
	check('ollama show', s.capabilities.includes('completion') &&
	    s.details.family === 'sluice' && typeof s.modelfile === 'string',
	    JSON.stringify(s));
	try {
		await ollama.show({ model: 'nope' });
		check('ollama show unknown', false, 'no error');
	} catch (e) {
		check('ollama show unknown', e.status_code === 404 &&
		    e.message === "model 'nope' not found",
		    `${e.status_code} ${e.message}`);
	}
}

// The last request the backend (the mock) received.
async function lastBackendBody() {
	const log = await (await fetch(`${mock}/mock/requests`)).json();
	return log[log.length - 1].body;
}

// The endpoint hands <think> reasoning back as a field (check_clients.c).
async function ollamaThink() {
	const thought = user({ text: '<think>plan</think>answer', chunk: 3 });
	const plain = await ollama.chat({ model: 'it', stream: false,
	    messages: thought });
	check('ollama thinking', plain.message.thinking === 'plan' &&
	    plain.message.content === 'answer', JSON.stringify(plain));
	const r = await ollama.chat({ model: 'it', stream: false, think: false,
	    messages: thought });
	check('ollama think false', !('thinking' in r.message) &&
	    r.message.content === 'answer', JSON.stringify(r));
	// An OpenAI-compatible backend has no such field.
	const sent = await lastBackendBody();
	check('think not sent to an openai backend', !('think' in sent),
	    JSON.stringify(sent));
	const s = await ollama.chat({ model: 'it', stream: true, think: false,
	    messages: thought });
	let text = '', thinking = 0;
	for await (const part of s) {
		text += part.message.content;
		if ('thinking' in part.message)
			thinking++;
	}
	check('ollama think false stream', text === 'answer' && thinking === 0,
	    `${text} / ${thinking} parts with thinking`);
}

// Ollama streams tool calls whole on a done:false part, then the final
// part without them.
async function ollamaStreamedToolCall() {
	const s = await ollama.chat({ model: 'it', stream: true,
	    tools: [{ type: 'function', function: { name: 'get_weather',
	    description: 'weather', parameters: { type: 'object',
	    properties: { city: { type: 'string' } } } } }],
	    messages: user({ tool_calls: [{ name: 'get_weather',
	    arguments: { city: 'Paris', unit: 'celsius' } }] }) });
	const parts = [];
	for await (const part of s)
		parts.push(part);
	const withCalls = parts.filter((p) => p.message.tool_calls?.length);
	const c = withCalls[0]?.message.tool_calls[0]?.function;
	check('ollama streamed tool call', withCalls.length === 1 &&
	    withCalls[0].done === false && c.name === 'get_weather' &&
	    c.arguments.city === 'Paris' && c.arguments.unit === 'celsius' &&
	    parts[parts.length - 1].done === true &&
	    parts.indexOf(withCalls[0]) === parts.length - 2,
	    JSON.stringify(parts));
}

async function ollamaAbortAndErrors() {
	const before = await clientGone();
	const s = await ollama.chat({ model: 'it', stream: true,
	    messages: user({ forever: true, delay_ms: 20 }) });
	try {
		for await (const part of s) {
			if (part.message.content)
				s.abort();
		}
	} catch (e) {
		/* AbortError */
	}
	await expectBackendClosed('ollama abort cancels the backend call', before);
	try {
		await ollama.chat({ model: 'it', messages: 'nope', stream: false });
		check('ollama 400', false, 'no error');
	} catch (e) {
		check('ollama 400', e.status_code === 400, `${e.status_code} ${e.message}`);
	}
	try {
		await ollama.chat({ model: 'it', stream: false,
		    messages: [{ role: 'user', content: 5 }] });
		check('ollama 400 content', false, 'no error');
	} catch (e) {
		check('ollama 400 content', e.status_code === 400 &&
		    e.message === 'messages[0].content must be a string.',
		    `${e.status_code} ${e.message}`);
	}
}

// The same backend errors through the ollama client: ResponseError with
// the status and the message.
async function ollamaBackendErrors() {
	const ask = (o, stream) => async () => {
		const r = await ollama.chat({ model: 'it', stream, messages: user(o) });
		if (stream)
			for await (const part of r)
				;
	};
	for (const stream of [false, true]) {
		const tag = stream ? ' (stream)' : '';
		let e = await thrown(ask({ status: 429, retry_after: '7' }, stream));
		check('ollama backend 429' + tag, e?.name === 'ResponseError' &&
		    e.status_code === 429 && /answered HTTP 429/.test(e.error), desc(e));
		e = await thrown(ask({ status: 400, error: 'input too long' }, stream));
		check('ollama backend 400' + tag, e?.name === 'ResponseError' &&
		    e.status_code === 400 && /HTTP 400: input too long/.test(e.error),
		    desc(e));
	}
	const r = await fetch(`${gw}/api/chat`, { method: 'POST', body:
	    JSON.stringify({ model: 'it', messages: user({ status: 429,
	    retry_after: '7' }) }) });
	check('ollama route Retry-After', r.status === 429 &&
	    r.headers.get('retry-after') === '7', `${r.status} ${r.headers.get('retry-after')}`);
}

// ---- the tool-call settings (addendum A8) ------------------------------

const OWUI = 'Available Tools: []\nYour task is to choose and return the ' +
    'correct tool(s) from the list of available tools based on the query.';
const weather = [{ type: 'function', function: { name: 'Get_Weather',
    parameters: { type: 'object', properties: { city: { type: 'string' } } } } }];

// interceptOpenWebUIToolRequests: "no tool" at once, no workflow run.
async function owuiIntercepted() {
	const r = await openai.chat.completions.create({ model: 'it', messages: [
	    { role: 'system', content: OWUI }, ...user({ text: 'ran' })] });
	const m = r.choices[0].message;
	check('openai owui intercepted', m.content === null &&
	    Array.isArray(m.tool_calls) && m.tool_calls.length === 0 &&
	    r.choices[0].finish_reason === 'tool_calls' &&
	    r.id.startsWith('chatcmpl-opnwui-tool-'), JSON.stringify(r));
	const o = await ollama.chat({ model: 'it', stream: false, messages: [
	    { role: 'system', content: OWUI }, ...user({ text: 'ran' })] });
	check('ollama owui intercepted', o.done === true &&
	    o.message.content === '' && o.done_reason === 'stop',
	    JSON.stringify(o));
}

// lowercaseToolCallFunctionNames: the client sees the name lower-cased.
async function namesLowercased() {
	const calls = { tool_calls: [{ name: 'Get_Weather', arguments: { city: 'Paris' } }] };
	const r = await openai.chat.completions.create({ model: 'it', tools: weather,
	    messages: user(calls) });
	const c = r.choices[0].message.tool_calls?.[0]?.function;
	check('openai tool name lower-cased', c?.name === 'get_weather' &&
	    JSON.parse(c.arguments).city === 'Paris', JSON.stringify(r));
	const o = await ollama.chat({ model: 'it', stream: false, tools: weather,
	    messages: user(calls) });
	const oc = o.message.tool_calls?.[0]?.function;
	check('ollama tool name lower-cased', oc?.name === 'get_weather' &&
	    oc.arguments.city === 'Paris', JSON.stringify(o));
}

// livenessToolCall: a streamed answer without a call ends with it.
async function livenessInjected() {
	const s = await openai.chat.completions.create({ model: 'it', stream: true,
	    messages: user({ text: 'All done.' }) });
	let text = '', finish = null, call = null;
	for await (const ch of s) {
		const d = ch.choices[0]?.delta;
		text += d?.content ?? '';
		call = d?.tool_calls?.[0] ?? call;
		finish = ch.choices[0]?.finish_reason ?? finish;
	}
	check('openai liveness call', text === 'All done.' &&
	    finish === 'tool_calls' && call?.function?.name === 'keep_going' &&
	    call.id.startsWith('wilmer_liveness_') &&
	    JSON.parse(call.function.arguments).note === '[Wilmer] go on',
	    `${text} / ${finish} / ${JSON.stringify(call)}`);
	const o = await ollama.chat({ model: 'it', stream: true,
	    messages: user({ text: 'All done.' }) });
	let oc = null, otext = '';
	for await (const part of o) {
		otext += part.message.content;
		oc = part.message.tool_calls?.[0]?.function ?? oc;
	}
	check('ollama liveness call', otext === 'All done.' &&
	    oc?.name === 'keep_going' && oc.arguments.note === '[Wilmer] go on',
	    `${otext} / ${JSON.stringify(oc)}`);
	const w = await openai.chat.completions.create({ model: 'it',
	    messages: user({ text: 'All done.' }) });
	check('openai no liveness call when whole', w.choices[0].message.tool_calls ===
	    undefined && w.choices[0].finish_reason === 'stop', JSON.stringify(w));
}

// tool_choice enforced through structured output (A8.6): the backend is
// asked for JSON, the client gets the call, whole or streamed.
async function toolChoiceEnforced() {
	const answer = { text: '{"name": "Get_Weather", "arguments": {"city": "Paris"}}' };
	const forced = { type: 'function', function: { name: 'Get_Weather' } };
	const r = await openai.chat.completions.create({ model: 'it', tools: weather,
	    tool_choice: forced, messages: user(answer) });
	const m = r.choices[0].message;
	const c = m.tool_calls?.[0];
	check('openai forced tool_choice', m.content === null &&
	    r.choices[0].finish_reason === 'tool_calls' &&
	    c?.id?.startsWith('wilmer-') && c.function.name === 'get_weather' &&
	    JSON.parse(c.function.arguments).city === 'Paris', JSON.stringify(r));
	const s = await openai.chat.completions.create({ model: 'it', stream: true,
	    tools: weather, tool_choice: 'required', messages: user(answer) });
	let text = '', finish = null, call = null;
	for await (const ch of s) {
		const d = ch.choices[0]?.delta;
		text += d?.content ?? '';
		call = d?.tool_calls?.[0] ?? call;
		finish = ch.choices[0]?.finish_reason ?? finish;
	}
	check('openai required tool_choice (stream)', text === '' &&
	    finish === 'tool_calls' && call?.function?.name === 'get_weather' &&
	    JSON.parse(call.function.arguments).city === 'Paris',
	    `${text} / ${finish} / ${JSON.stringify(call)}`);
	const log = await (await fetch(`${mock}/mock/requests`)).json();
	const sent = log[log.length - 1].body;
	check('forced round sends a schema, not the tools', sent.tools ===
	    undefined && sent.response_format?.type === 'json_schema',
	    JSON.stringify(sent));
}

// The embeddings routes (the user's embeddingEndpointName is the mock,
// see tests/it/check_clients.c), compared with the vectors the mock
// itself gives the same texts.
const near = (a, b) => Array.isArray(a) && Array.isArray(b) &&
    a.length === b.length && a.every((v, i) => Array.isArray(v) ?
    near(v, b[i]) : Math.abs(v - b[i]) < 1e-6);

async function mockVectors(texts) {
	const r = await fetch(`${mock}/api/embed`, { method: 'POST',
	    headers: { 'Content-Type': 'application/json' },
	    body: JSON.stringify({ model: 'm', input: texts }) });
	return (await r.json()).embeddings;
}

async function embeddings() {
	const texts = ['the cat sat', 'dogs bark loudly', 'a cat and a dog'];
	const want = await mockVectors(texts);
	// No encoding_format: the client asks for base64 and decodes it.
	const d = await openai.embeddings.create({ model: 'it', input: texts });
	check('openai embeddings (base64, the default)', d.object === 'list' &&
	    near(d.data.map((x) => x.embedding), want) &&
	    d.data.every((x, i) => x.index === i) && d.model === 'it' &&
	    d.usage.prompt_tokens === 3, JSON.stringify(d));
	const f = await openai.embeddings.create({ model: 'it', input: texts[1],
	    encoding_format: 'float' });
	check('openai embeddings float', f.data.length === 1 &&
	    near(f.data[0].embedding, want[1]), JSON.stringify(f));
	const e = await ollama.embed({ model: 'it', input: texts });
	check('ollama embed', near(e.embeddings, want) && e.model === 'it' &&
	    e.prompt_eval_count === 3, JSON.stringify(e));
	const one = await ollama.embed({ model: 'it', input: texts[0] });
	check('ollama embed one string', near(one.embeddings, [want[0]]),
	    JSON.stringify(one));
	const l = await ollama.embeddings({ model: 'it', prompt: texts[2] });
	check('ollama embeddings (legacy)', near(l.embedding, want[2]),
	    JSON.stringify(l));
	let x = await thrown(() => openai.embeddings.create({ model: 'it',
	    input: [[1, 2, 3]] }));
	check('openai embeddings token ids 400', x instanceof
	    OpenAI.BadRequestError && /token ids/.test(x.message), desc(x));
	x = await thrown(() => ollama.embed({ model: 'it', input: 5 }));
	check('ollama embed 400', x?.status_code === 400 &&
	    /invalid input type/.test(x.message), desc(x));
}

try {
	if (mode === 'tools') {
		await owuiIntercepted();
		await namesLowercased();
		await livenessInjected();
		await toolChoiceEnforced();
		console.log(failed === 0 ? 'all client checks passed' :
		    `${failed} client checks failed`);
		process.exit(failed === 0 ? 0 : 1);
	}
	await openaiChat();
	await openaiRest();
	await openaiBackendErrors();
	await openaiAbort();
	await ollamaCalls();
	await ollamaModels();
	await ollamaThink();
	await ollamaStreamedToolCall();
	await ollamaAbortAndErrors();
	await ollamaBackendErrors();
	await embeddings();
} catch (e) {
	check('no unexpected exception', false, e.stack);
}
console.log(failed === 0 ? 'all client checks passed' : `${failed} client checks failed`);
process.exit(failed === 0 ? 0 : 1);

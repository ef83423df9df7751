// fetch-shim.mjs - preloaded into the Portkey gateway by bench/run.sh.
// Portkey 1.15.2 appends headers to the Response that fetch() returned,
// whose headers are immutable under Node's fetch: every streamed answer
// fails with "TypeError: immutable" (Portkey-AI/gateway issues 1389 and
// 1550). Handing it a fresh Response around the same body, as its
// proposed fix does, makes streaming work; the body is not copied.
const upstream = globalThis.fetch;

globalThis.fetch = async (...args) => {
	const r = await upstream(...args);
	return new Response(r.body, r);
};

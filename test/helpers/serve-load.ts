/**
 * A load generator for `turnwise serve`, run as its own process (`node --import tsx
 * test/helpers/serve-load.ts <baseURL> <clients> <retries>`): `clients` heavy completions requests
 * sent at once (n = 8, 48 tokens, echo + logprobs, as the 500 clients sent), each retried up
 * to `retries` times after a 429, waiting what `Retry-After` says. Prints one JSON line: every
 * answer's status, Retry-After, error body and latency, and the final status of each client.
 */
const [baseURL, clientsArg, retriesArg] = process.argv.slice(2);
const clients = Number(clientsArg);
const retries = Number(retriesArg ?? 0);

interface Answer {
  readonly status: number;
  readonly retryAfter: string | null;
  readonly error: unknown;
  readonly ms: number;
}

const body = JSON.stringify({ prompt: 'The quick brown fox', n: 8, max_tokens: 48, echo: true, logprobs: 1, temperature: 1, seed: 1 });

async function client(): Promise<{ answers: Answer[]; final: number }> {
  const answers: Answer[] = [];
  for (let attempt = 0; ; attempt++) {
    const started = performance.now();
    const response = await fetch(`${baseURL}/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    const json = (await response.json()) as { error?: unknown };
    answers.push({ status: response.status, retryAfter: response.headers.get('retry-after'), error: json.error ?? null, ms: performance.now() - started });
    if (response.status !== 429 || attempt >= retries) return { answers, final: response.status };
    await new Promise((resolve) => setTimeout(resolve, 1000 * Number(response.headers.get('retry-after') ?? 1)));
  }
}

const results = await Promise.all(Array.from({ length: clients }, () => client()));
process.stdout.write(`${JSON.stringify({ answers: results.flatMap((r) => r.answers), finals: results.map((r) => r.final) })}\n`);

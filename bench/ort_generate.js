#!/usr/bin/env node
// Greedy generation in ONNX Runtime (onnxruntime-node, CPU EP), the loop a user
// writes: the prompt through the decode graph with empty pasts, then one
// session.run per token, each present copied into a new past tensor.
//
// usage: NODE_PATH=$ORT_HOME/node_modules node bench/ort_generate.js DECODE.onnx
//          --prompt-ids 1,2,3 [--max-new-tokens N] [--threads N] [--warmup N]
// --warmup N runs N untimed two-token generations first (one-time set-up costs).
// Prints one JSON line: generated_ids, prefill_ms, token_ms_median, token_ms_p90, tokens_per_s.
'use strict';
const path = require('path');
const ort = require('onnxruntime-node');

function parseArgs(argv) {
  const a = { model: null, prompt: null, maxNew: 32, threads: 1, warmup: 0 };
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i];
    if (k === '--prompt-ids') a.prompt = argv[++i].split(',').map((s) => BigInt(s.trim()));
    else if (k === '--max-new-tokens') a.maxNew = parseInt(argv[++i], 10);
    else if (k === '--threads') a.threads = parseInt(argv[++i], 10);
    else if (k === '--warmup') a.warmup = parseInt(argv[++i], 10);
    else if (!a.model) a.model = k;
    else throw new Error(`unknown argument ${k}`);
  }
  if (!a.model || !a.prompt) throw new Error('usage: ort_generate.js DECODE.onnx --prompt-ids 1,2,3');
  return a;
}

// past_key_values.3.key -> present.3.key, past_key_3 -> present_key_3, past_3 -> present_3
function presentName(past) {
  return past.replace('past_key_values', 'present').replace(/^past/, 'present');
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const session = await ort.InferenceSession.create(path.resolve(args.model), {
    executionProviders: ['cpu'], intraOpNumThreads: args.threads, interOpNumThreads: 1,
    executionMode: 'sequential', graphOptimizationLevel: process.env.ORT_OPT || 'all', logSeverityLevel: 3,
  });
  const pasts = session.inputNames.filter((n) => n.includes('past'));
  for (const p of pasts) {
    if (!session.outputNames.includes(presentName(p))) throw new Error(`no present output for ${p}`);
  }
  const meta = session.inputMetadata || [];
  const shapeOf = (name) => {
    const m = Array.isArray(meta) ? meta.find((x) => x.name === name) : meta[name];
    return m && m.shape ? m.shape : null;
  };
  const generate = async (maxNew) => {
    let cache = {};
    for (const p of pasts) {
      const dims = (shapeOf(p) || ['batch', 0, 'past', 0]).map((d, i) => (i === 2 ? 0 : typeof d === 'number' ? d : 1));
      cache[p] = new ort.Tensor('float32', new Float32Array(0), dims);
    }
    const hasMask = session.inputNames.includes('attention_mask');
    const hasPos = session.inputNames.includes('position_ids');
    let ids = args.prompt;
    let length = 0;
    const out = [];
    const stepMs = [];
    let prefillMs = 0;
    for (let step = 0; step < maxNew; step++) {
      const t = ids.length;
      const feeds = { input_ids: new ort.Tensor('int64', BigInt64Array.from(ids), [1, t]) };
      if (hasMask) feeds.attention_mask = new ort.Tensor('int64', new BigInt64Array(length + t).fill(1n), [1, length + t]);
      if (hasPos) {
        const pos = new BigInt64Array(t);
        for (let i = 0; i < t; i++) pos[i] = BigInt(length + i);
        feeds.position_ids = new ort.Tensor('int64', pos, [1, t]);
      }
      const t0 = process.hrtime.bigint();
      Object.assign(feeds, cache);
      const res = await session.run(feeds);
      // The copy a plain loop makes: each present becomes a fresh past tensor.
      cache = {};
      for (const p of pasts) {
        const pr = res[presentName(p)];
        cache[p] = new ort.Tensor('float32', Float32Array.from(pr.data), pr.dims);
      }
      // Timed like attune's steps: the run and the cache hand-over, not the token choice.
      const ms = Number(process.hrtime.bigint() - t0) / 1e6;
      const logits = res.logits;
      const vocab = logits.dims[logits.dims.length - 1];
      const base = (t - 1) * vocab;
      let best = 0;
      for (let v = 1; v < vocab; v++) if (logits.data[base + v] > logits.data[base + best]) best = v;
      if (step === 0) prefillMs = ms; else stepMs.push(ms);
      out.push(best);
      length += t;
      ids = [BigInt(best)];
    }
    return { out, stepMs, prefillMs };
  };
  for (let i = 0; i < args.warmup; i++) await generate(Math.min(2, args.maxNew));
  const { out, stepMs, prefillMs } = await generate(args.maxNew);
  const sorted = [...stepMs].sort((x, y) => x - y);
  const n = sorted.length;
  const median = n === 0 ? 0 : n % 2 ? sorted[n >> 1] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
  const p90 = n === 0 ? 0 : sorted[Math.min(n, Math.max(1, Math.ceil(0.9 * n))) - 1];
  const total = stepMs.reduce((x, y) => x + y, 0);
  console.log(JSON.stringify({
    generated_ids: [out], prefill_ms: prefillMs, token_ms_median: median, token_ms_p90: p90,
    tokens_per_s: total > 0 ? (n * 1000) / total : 0, threads: args.threads,
  }));
}

main().catch((e) => { console.error(String(e && e.stack || e)); process.exit(1); });

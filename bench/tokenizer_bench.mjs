// The reference side of bench/tokenizer_bench.sh: @huggingface/tokenizers on
// the same tokenizer.json and text. Prints the same JSON fields as
// `attune tokenize --time N`.
//   node bench/tokenizer_bench.mjs NODE_MODULES TOKENIZER.json TEXT_FILE N
import fs from "node:fs";
import path from "node:path";

const [modules, tokenizerPath, textPath, repeatsText] = process.argv.slice(2);
const { Tokenizer } = await import(path.join(modules, "@huggingface/tokenizers/dist/tokenizers.mjs"));
const json = JSON.parse(fs.readFileSync(tokenizerPath, "utf8"));
const tokenizer = new Tokenizer(json, {});
const text = fs.readFileSync(textPath, "utf8");
const bytes = Buffer.byteLength(text, "utf8");
const repeats = Number(repeatsText);
const now = () => Number(process.hrtime.bigint()) / 1e9;

let start = now();
const ids = tokenizer.encode(text, { add_special_tokens: false }).ids;
const coldS = now() - start;
start = now();
for (let i = 0; i < repeats; ++i) tokenizer.encode(text, { add_special_tokens: false });
const encodeS = (now() - start) / repeats;
start = now();
for (let i = 0; i < repeats; ++i) tokenizer.decode(ids, { skip_special_tokens: false, clean_up_tokenization_spaces: false });
const decodeS = (now() - start) / repeats;
console.log(JSON.stringify({
  bytes, tokens: ids.length,
  encode_mb_per_s: bytes / encodeS / 1e6,
  encode_first_mb_per_s: bytes / coldS / 1e6,
  decode_us_per_token: (decodeS / ids.length) * 1e6,
}));

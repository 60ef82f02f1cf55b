#!/usr/bin/env bash
# Tokenizer speed on one core: attune tokenize --time against the reference
# JavaScript implementation (@huggingface/tokenizers) on the same
# tokenizer.json and the same text, in the same run. Prints per family the
# encoding throughput (MB/s, first pass and repeated), the decode cost per
# token, and attune's ratio to the reference.
#
#   bench/tokenizer_bench.sh [BUILD_DIR] [NODE_MODULES] [REPEATS]
#
# NODE_MODULES holds @huggingface/tokenizers (npm install --ignore-scripts
# @huggingface/tokenizers); without it only attune's figures are printed.
# The text: this repository's docs and the test corpus, repeated to ~1 MB.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
modules=${2:-/tmp/tokfix/node_modules}
repeats=${3:-5}
attune=$build/tools/attune
[ -x "$attune" ] || { echo "tokenizer_bench: build the CLI first ($attune)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

python3 - "$root" "$work/text.txt" <<'PY'
import glob, json, sys
root, out = sys.argv[1], sys.argv[2]
parts = [open(p, encoding="utf-8").read() for p in sorted(glob.glob(root + "/docs/*.md"))]
parts += json.load(open(root + "/tests/tokenizer/gen/corpus.json", encoding="utf-8"))
text = "\n".join(parts)
open(out, "w", encoding="utf-8").write((text + "\n") * max(1, 1_000_000 // len(text.encode())))
PY
echo "text: $(wc -c < "$work/text.txt") bytes; one core (taskset -c 0); $repeats repeats"
have_node=0
[ -f "$modules/@huggingface/tokenizers/dist/tokenizers.mjs" ] && command -v node >/dev/null && have_node=1
printf '%-8s %-9s %12s %12s %14s %16s\n' family impl "encode MB/s" "first MB/s" "decode us/tok" "stream us/tok"
for family in gpt2 llama3 qwen3 llama2 gemma3 unigram t5; do
  src=$root/tests/tokenizer/fixtures/$family
  file=$src/tokenizer.json
  if [ -f "$file.xz" ]; then xz -dc "$file.xz" > "$work/$family.json"; file=$work/$family.json; fi
  ours=$(taskset -c 0 "$attune" tokenize --tokenizer "$file" --file "$work/text.txt" --time "$repeats")
  ref='{}'
  if [ $have_node = 1 ]; then
    ref=$(taskset -c 0 node "$root/bench/tokenizer_bench.mjs" "$modules" "$file" "$work/text.txt" "$repeats")
  fi
  python3 - "$family" "$ours" "$ref" <<'PY'
import json, sys
family, ours, ref = sys.argv[1], json.loads(sys.argv[2]), json.loads(sys.argv[3])
row = "%-8s %-9s %12.2f %12.2f %14.3f %16s"
print(row % (family, "attune", ours["encode_mb_per_s"], ours["encode_first_mb_per_s"], ours["decode_us_per_token"],
             "%.3f" % ours["stream_decode_us_per_token"]))
if ref:
    print(row % (family, "reference", ref["encode_mb_per_s"], ref["encode_first_mb_per_s"], ref["decode_us_per_token"], "-"))
    same = "same token count" if ref["tokens"] == ours["tokens"] else "TOKEN COUNTS DIFFER %d vs %d" % (ours["tokens"], ref["tokens"])
    print("%-8s ratio     %11.1fx %11.1fx %13.1fx   (%s)" % (family, ours["encode_mb_per_s"] / ref["encode_mb_per_s"],
          ours["encode_first_mb_per_s"] / ref["encode_first_mb_per_s"],
          ref["decode_us_per_token"] / ours["decode_us_per_token"], same))
PY
done

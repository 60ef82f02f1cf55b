#!/usr/bin/env bash
# Runs check_layers.sh on a small tree with one upward include per rule and
# checks that it fails naming each of them, and passes once they are gone.
set -uo pipefail
check=$1
tree=$(mktemp -d)
trap 'rm -rf "$tree"' EXIT
mkdir -p "$tree"/{core/ir,ops/matmul,importer,engine/passes,engine/exec,engine/rewrite,tools,include/attune,examples/hello}
put() { printf '%s\n' "${@:2}" > "$tree/$1"; }
# Allowed: downward, within a folder, the public API from anywhere, a header beside the file.
put core/ir/graph.h '#pragma once' '#include "attune/tensor.h"' '#include "absl/status/status.h"'
put ops/matmul/gemm.cc '#include "core/ir/graph.h"' '#include "ops/matmul/gemm.h"'
put ops/matmul/gemm.h '#pragma once'
put engine/exec/plan.h '#include "ops/matmul/gemm.h"' '#include "engine/passes/pass.h"'
put engine/passes/pass.h '#include "engine/rewrite/plan.h"' '#include "importer/reader.h"'
put engine/rewrite/plan.h '#include "core/ir/graph.h"'
put importer/reader.h '#include "core/ir/graph.h"'
put tools/main.cc '#include "engine/exec/plan.h"'
put include/attune/tensor.h '#pragma once' '#include "attune/element_type.h"'
put examples/hello/main.cc '#include "attune/tensor.h"' '#include "util.h"'
put examples/hello/util.h '#pragma once'

fail() { echo "check_layers_fails: $*"; exit 1; }
out=$(bash "$check" "$tree") || fail "a tree with only downward includes fails: $out"

# One upward include per rule.
put core/ir/graph.h '#pragma once' '#include "engine/passes/pass.h"'
put ops/matmul/gemm.cc '#include "core/ir/graph.h"' '#include "importer/reader.h"'
put engine/rewrite/plan.h '#include "engine/exec/plan.h"'
put include/attune/tensor.h '#pragma once' '#include "core/ir/graph.h"'
put examples/hello/main.cc '#include "attune/tensor.h"' '#include "ops/matmul/gemm.h"'
out=$(bash "$check" "$tree")
rc=$?
[ $rc = 1 ] || fail "exit $rc, not 1, on upward includes: $out"
for want in 'core/ir/graph.h:2: includes "engine/passes/pass.h"' \
            'ops/matmul/gemm.cc:2: includes "importer/reader.h"' \
            'engine/rewrite/plan.h:1: includes "engine/exec/plan.h"' \
            'include/attune/tensor.h:2: includes "core/ir/graph.h"' \
            'examples/hello/main.cc:2: includes "ops/matmul/gemm.h"'; do
  grep -qF "$want" <<<"$out" || fail "no report of $want in: $out"
done
n=$(grep -c ': includes "' <<<"$out")
[ "$n" = 5 ] || fail "$n violations reported, not 5: $out"
echo "check_layers_fails: the check names all 5 upward includes"

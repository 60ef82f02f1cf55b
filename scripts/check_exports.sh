#!/usr/bin/env bash
# Checks that a libattune.so exports the public API and nothing else:
#   check_exports.sh path/to/libattune.so
# Every defined dynamic symbol must be one of the ATTUNE_API functions or
# members of the exported classes below; the SONAME must be libattune.so.<major>.
set -euo pipefail
lib=${1:?usage: check_exports.sh LIBATTUNE_SO}

# The public API as demangled names (include/attune/*.h, ATTUNE_API); template
# instances start with their return type, functions returning std::string carry [abi:cxx11].
allowed='^([^(]* )?attune::(Session::|Tensor::|Generator::|DecodeBatch::([^S]|Step)|Tokenizer::|TextStream::|GeneratedText::|(ListPasses|FindDecoderSignature|DescribeDecoderSignature|ElementSize|ElementTypeName|IsSupportedElementType|HalfToFloat|FloatToHalf|BFloat16ToFloat|FloatToBFloat16|CheckedElementCount|ShapeToString)(\[abi:cxx11\])?\()'
required=('attune::Session::Create(' 'attune::Session::CreateFromBytes(' 'attune::Session::Run(' 'attune::Session::RunInto('
          'attune::Session::inputs()' 'attune::Session::outputs()' 'attune::Session::fusion_report()'
          'attune::Session::SaveOptimizedModel(' 'attune::Session::~Session()' 'attune::Tensor::Create('
          'attune::Tensor::Borrow(' 'attune::Tensor::Clone()' 'attune::ListPasses' 'attune::ElementTypeName('
          'attune::Generator::Create(' 'attune::Generator::Generate(' 'attune::FindDecoderSignature('
          'attune::DecodeBatch::Create(' 'attune::DecodeBatch::Step(' 'attune::Tokenizer::Load(' 'attune::Tokenizer::Decode')

# Defined symbols only (the version node ATTUNE_0 is an absolute symbol, type A).
symbols=$(nm -D --defined-only "$lib" | awk '$2 != "A" { $1 = ""; $2 = ""; sub(/^  /, ""); print }' | c++filt | sort -u)
unexpected=$(grep -Ev "$allowed" <<<"$symbols" || true)
count=$(wc -l <<<"$symbols")
status=0
if [ -n "$unexpected" ]; then
  echo "check_exports: $lib exports symbols outside the public API:" >&2
  head -40 <<<"$unexpected" >&2
  status=1
fi
for r in "${required[@]}"; do
  if ! grep -qF "$r" <<<"$symbols"; then
    echo "check_exports: $lib does not export $r" >&2
    status=1
  fi
done
soname=$(objdump -p "$lib" | awk '/SONAME/ { print $2 }')
if ! [[ "$soname" =~ ^libattune\.so\.[0-9]+$ ]]; then
  echo "check_exports: SONAME is '$soname', expected libattune.so.<major>" >&2
  status=1
fi
if [ $status -eq 0 ]; then
  echo "check_exports: $count exported symbols, all public API; SONAME $soname"
fi
exit $status

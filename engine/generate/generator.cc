// attune::Generator: prompt (prefill) run, then one decode run per token with
// the cache kept in KvCache's buffers.
#include "attune/generator.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <optional>

#include "absl/strings/str_cat.h"
#include "core/common/escape.h"
#include "core/common/status_macros.h"
#include "engine/generate/kv_cache.h"
#include "engine/generate/sampler.h"
#include "engine/generate/signature.h"
#include "engine/generate/step_inputs.h"

namespace attune {
namespace {

const TensorInfo* FindInfo(const std::vector<TensorInfo>& infos, const std::string& name) {
  for (const TensorInfo& i : infos)
    if (i.name == name) return &i;
  return nullptr;
}

const Tensor* FindTensor(const NamedTensors& tensors, const std::string& name) {
  for (const auto& [n, t] : tensors)
    if (n == name) return &t;
  return nullptr;
}

double Percentile(std::vector<double> values, double q) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  // Nearest rank: the smallest value with at least q of the samples at or below it.
  const size_t rank = static_cast<size_t>(std::ceil(q * static_cast<double>(values.size())));
  return values[std::clamp<size_t>(rank, 1, values.size()) - 1];
}

double Median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

// The shape of an empty past for a decode graph that must also take the
// prompt: the declared shape with the sequence axis 0 and the one other
// symbolic dimension taken as the batch. That dimension must be named as the
// token ids' batch is, when both are named: BLOOM's past is (batch · heads,
// D, past), which no batch size alone gives.
absl::StatusOr<std::vector<int64_t>> EmptyPastShape(const TensorInfo& info, int seq_axis, int64_t batch,
                                                    const std::string& batch_symbol) {
  if (!info.has_shape)
    return absl::InvalidArgumentError(absl::StrCat("past input ", QuoteName(info.name),
                                                   " has no declared shape; an empty cache cannot be sized (give a "
                                                   "prefill model)"));
  std::vector<int64_t> shape = info.shape;
  bool batch_seen = false;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (static_cast<int>(d) == seq_axis) {
      shape[d] = 0;
    } else if (shape[d] < 0) {
      if (batch_seen)
        return absl::InvalidArgumentError(absl::StrCat(
            "past input ", QuoteName(info.name), " has more than one ",
            "symbolic dimension besides the sequence; an empty cache cannot ", "be sized (give a prefill model)"));
      const std::string symbol = d < info.shape_symbols.size() ? info.shape_symbols[d] : "";
      if (!symbol.empty() && !batch_symbol.empty() && symbol != batch_symbol)
        return absl::InvalidArgumentError(absl::StrCat(
            "past input ", QuoteName(info.name), " has dimension ", d, " '", symbol, "', not the batch '", batch_symbol,
            "' of the token ids; an empty cache cannot be sized (give a prefill model)"));
      shape[d] = batch;
      batch_seen = true;
    }
  }
  return shape;
}

// The last position's logits of every row, as float rows of the vocabulary.
absl::StatusOr<std::vector<std::span<const float>>> LastLogits(const Tensor& logits, int64_t batch) {
  if (logits.type() != ElementType::kFloat32)
    return absl::InvalidArgumentError(absl::StrCat("logits are ", logits.DebugString(), "; float32 expected"));
  if ((logits.rank() != 3 && logits.rank() != 2) || logits.shape()[0] != batch)
    return absl::InvalidArgumentError(
        absl::StrCat("logits are ", logits.DebugString(), "; expected (batch, seq, vocab) or (batch, vocab)"));
  const int64_t vocab = logits.shape().back();
  const int64_t seq = logits.rank() == 3 ? logits.shape()[1] : 1;
  std::vector<std::span<const float>> rows;
  for (int64_t r = 0; r < batch; ++r)
    rows.emplace_back(logits.data<float>() + (r * seq + seq - 1) * vocab, static_cast<size_t>(vocab));
  return rows;
}

// Every graph input must be one the loop feeds: the roles and the pasts.
absl::Status CheckFeedable(const Session& session, const DecoderSignature& sig, const char* which) {
  if (!sig.encoder_cache.empty())
    return absl::InvalidArgumentError(absl::StrCat(
        which, " inputs include an encoder's cached keys and values (", QuoteName(sig.encoder_cache.front()),
        "): an encoder-decoder model, which generate does not run (it runs decoder-only models)"));
  for (const TensorInfo& in : session.inputs()) {
    bool fed = in.name == sig.input_ids || in.name == sig.attention_mask || in.name == sig.position_ids;
    for (const CacheBinding& b : sig.cache) fed |= in.name == b.past;
    if (!fed)
      return absl::InvalidArgumentError(absl::StrCat(
          which, " input ", QuoteName(in.name),
          " is neither token ids, attention_mask, position_ids nor a past cache tensor; generate cannot feed it"));
  }
  return absl::OkStatus();
}

}  // namespace

struct Generator::State {
  const Session* prefill = nullptr;  // null: the decode graph also takes the prompt
  const Session* decode = nullptr;
  DecoderSignature prefill_sig;
  DecoderSignature decode_sig;
  std::vector<size_t> prefill_present;  // per decode binding, the prefill output index in prefill_sig.cache
  std::vector<CachePath> cache_paths;   // per decode binding
};

namespace {

// Whether each decode cache tensor can be one appended buffer: a separate key
// or value tensor, float32 (B, H, S, D) growing on axis 2, and a pair the
// session can bind (its fused attention reads the past and writes the present).
std::vector<CachePath> FindCachePaths(const Session& decode, const DecoderSignature& sig) {
  std::vector<CachePath> paths;
  for (const CacheBinding& b : sig.cache) {
    CachePath path{b.past, false, ""};
    const TensorInfo* info = FindInfo(decode.inputs(), b.past);
    if (b.kind == "kv") {
      path.why_not = absl::StrCat("past ", QuoteName(b.past), " holds key and value in one tensor");
    } else if (info == nullptr || info->type != ElementType::kFloat32 || info->shape.size() != 4 || b.seq_axis != 2) {
      path.why_not =
          absl::StrCat("past ", QuoteName(b.past),
                       " is not a float32 (batch, heads, seq, dim) tensor growing on axis 2");
    } else if (absl::Status ok = decode.CheckCacheBuffer(b.past, b.present); !ok.ok()) {
      path.why_not = std::string(ok.message());
    } else {
      path.appended = true;
    }
    paths.push_back(std::move(path));
  }
  return paths;
}

}  // namespace

Generator::Generator(std::unique_ptr<State> state) : state_(std::move(state)) {}
Generator::~Generator() = default;

const DecoderSignature& Generator::decode_signature() const { return state_->decode_sig; }
const std::vector<CachePath>& Generator::cache_paths() const { return state_->cache_paths; }

absl::StatusOr<std::unique_ptr<Generator>> Generator::Create(const Session& decode, const NameOverrides& overrides) {
  auto state = std::make_unique<State>();
  state->decode = &decode;
  ASSIGN_OR_RETURN(state->decode_sig, FindDecoderSignature(decode, overrides, true));
  RETURN_IF_ERROR(CheckFeedable(decode, state->decode_sig, "the model's"));
  state->cache_paths = FindCachePaths(decode, state->decode_sig);
  return std::unique_ptr<Generator>(new Generator(std::move(state)));
}

absl::StatusOr<std::unique_ptr<Generator>> Generator::Create(const Session& prefill, const Session& decode,
                                                             const NameOverrides& overrides) {
  auto state = std::make_unique<State>();
  state->prefill = &prefill;
  state->decode = &decode;
  ASSIGN_OR_RETURN(state->decode_sig, FindDecoderSignature(decode, overrides, true));
  // The overrides name the decode graph; the prefill graph's roles are found
  // alone (its presents usually carry the decode graph's present names).
  NameOverrides prefill_overrides;
  for (const auto& [from, to] : overrides)
    if (FindInfo(from == "logits" ? prefill.outputs() : prefill.inputs(), to) != nullptr &&
        (from == "input_ids" || from == "attention_mask" || from == "position_ids" || from == "logits"))
      prefill_overrides.emplace_back(from, to);
  auto prefill_sig = FindDecoderSignature(prefill, prefill_overrides, false);
  if (!prefill_sig.ok()) return Annotate(prefill_sig.status(), "prefill model");
  state->prefill_sig = *std::move(prefill_sig);
  RETURN_IF_ERROR(CheckFeedable(decode, state->decode_sig, "the decode model's"));
  RETURN_IF_ERROR(CheckFeedable(prefill, state->prefill_sig, "the prefill model's"));
  const auto& p = state->prefill_sig.cache;
  const auto& d = state->decode_sig.cache;
  if (p.size() != d.size())
    return absl::InvalidArgumentError(
        absl::StrCat("the prefill model returns ", p.size(), " cache tensors but the decode model takes ", d.size()));
  // Pair by output name, else by (layer, kind), else in order.
  for (size_t i = 0; i < d.size(); ++i) {
    size_t found = p.size();
    for (size_t j = 0; j < p.size() && found == p.size(); ++j)
      if (p[j].present == d[i].present) found = j;
    for (size_t j = 0; j < p.size() && found == p.size(); ++j)
      if (p[j].layer == d[i].layer && p[j].kind == d[i].kind) found = j;
    state->prefill_present.push_back(found == p.size() ? i : found);
  }
  state->cache_paths = FindCachePaths(decode, state->decode_sig);
  return std::unique_ptr<Generator>(new Generator(std::move(state)));
}

absl::StatusOr<GenerationResult> Generator::Generate(const std::vector<std::vector<int64_t>>& prompts,
                                                     const GenerationOptions& options,
                                                     const TokenCallback& on_token) const {
  const State& s = *state_;
  const DecoderSignature& dsig = s.decode_sig;
  const DecoderSignature& psig = s.prefill != nullptr ? s.prefill_sig : dsig;
  const Session& first = s.prefill != nullptr ? *s.prefill : *s.decode;
  GenerationResult result;
  if (prompts.empty()) return absl::InvalidArgumentError("no prompt given");
  if (options.max_new_tokens < 1) return absl::InvalidArgumentError("max_new_tokens must be at least 1");
  if (!options.greedy && !(options.temperature > 0))
    return absl::InvalidArgumentError("temperature must be positive when sampling");
  if (!(options.top_p > 0) || options.top_p > 1) return absl::InvalidArgumentError("top_p must be in (0, 1]");

  // The batch: left padding to the longest prompt.
  BatchLayout layout;
  layout.batch = static_cast<int64_t>(prompts.size());
  for (const auto& p : prompts) layout.prompt_len = std::max<int64_t>(layout.prompt_len, p.size());
  const int64_t vocab = dsig.vocab_size;
  for (size_t r = 0; r < prompts.size(); ++r) {
    if (prompts[r].empty()) return absl::InvalidArgumentError(absl::StrCat("prompt ", r + 1, " is empty"));
    for (int64_t id : prompts[r])
      if (id < 0 || (vocab > 0 && id >= vocab))
        return absl::InvalidArgumentError(absl::StrCat("prompt ", r + 1, ": token id ", id,
                                                       " is outside the vocabulary [0, ",
                                                       vocab > 0 ? absl::StrCat(vocab) : "?", ")"));
    layout.pad.push_back(layout.prompt_len - static_cast<int64_t>(prompts[r].size()));
  }
  const bool padded = std::any_of(layout.pad.begin(), layout.pad.end(), [](int64_t p) { return p > 0; });
  if (padded && (psig.attention_mask.empty() || dsig.attention_mask.empty()))
    return absl::InvalidArgumentError(
        "prompts of different lengths need a model with an attention_mask input; run them one at a time");
  // Positions counted from the mask (cumsum(attention_mask)) skip the padding by themselves.
  auto shifted = [](const DecoderSignature& sig) { return sig.position_ids.empty() && !sig.positions_from_mask; };
  if (padded && (shifted(psig) || shifted(dsig)))
    result.notes.push_back(
        "the model has no position_ids input: left-padded prompts see positions shifted by their padding, so their "
        "tokens may differ from running them alone");
  if (options.eos_id >= 0 && vocab > 0 && options.eos_id >= vocab)
    return absl::InvalidArgumentError(
        absl::StrCat("eos id ", options.eos_id, " is outside the vocabulary [0, ", vocab, ")"));

  // The longest sequence: the last token produced is never fed back.
  const int64_t total = layout.prompt_len + options.max_new_tokens;
  int64_t context = dsig.context;
  if (options.max_context > 0) context = context > 0 ? std::min(context, options.max_context) : options.max_context;
  const std::string context_source = dsig.context > 0 && context == dsig.context
                                         ? "the model's context (position embedding rows)"
                                         : "the context limit";
  if (context > 0 && layout.prompt_len > context)
    return absl::InvalidArgumentError(
        absl::StrCat("a prompt of ", layout.prompt_len, " tokens is longer than ", context_source, " of ", context));
  if (context > 0 && total - 1 > context)
    return absl::InvalidArgumentError(absl::StrCat("prompt (", layout.prompt_len, ") + max new tokens (",
                                                   options.max_new_tokens, ") - 1 = ", total - 1, " exceeds ",
                                                   context_source, " of ", context));
  const int64_t capacity = std::max<int64_t>(total - 1, layout.prompt_len);

  const int64_t pad_id = options.eos_id >= 0 ? options.eos_id : 0;
  SamplerConfig sampler_config{options.greedy, options.temperature, options.top_k, options.top_p};
  std::vector<Sampler> samplers;
  for (int64_t r = 0; r < layout.batch; ++r)
    samplers.emplace_back(sampler_config, options.seed ^ (0xa0761d6478bd642full * static_cast<uint64_t>(r + 1)));

  // Feeds for the ids, mask and positions of one run.
  auto role_feeds = [&](const Session& session, const DecoderSignature& sig, const std::vector<int64_t>& ids,
                        int64_t from, int64_t to) -> absl::StatusOr<NamedTensors> {
    NamedTensors feeds;
    const int64_t t = to - from;
    ASSIGN_OR_RETURN(Tensor ids_t, MakeMatrix(FindInfo(session.inputs(), sig.input_ids)->type, layout.batch, t, ids));
    feeds.emplace_back(sig.input_ids, std::move(ids_t));
    if (!sig.attention_mask.empty()) {
      ASSIGN_OR_RETURN(Tensor m, MakeMatrix(FindInfo(session.inputs(), sig.attention_mask)->type, layout.batch, to,
                                            layout.Mask(to)));
      feeds.emplace_back(sig.attention_mask, std::move(m));
    }
    if (!sig.position_ids.empty()) {
      ASSIGN_OR_RETURN(Tensor p, MakeMatrix(FindInfo(session.inputs(), sig.position_ids)->type, layout.batch, t,
                                            layout.Positions(from, to)));
      feeds.emplace_back(sig.position_ids, std::move(p));
    }
    return feeds;
  };
  using Clock = std::chrono::steady_clock;
  auto ms_since = [](Clock::time_point start) {
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  };

  // Prefill: the prompt through the prefill graph, or through the decode graph with an empty cache.
  ASSIGN_OR_RETURN(NamedTensors feeds,
                   role_feeds(first, psig, layout.PromptIds(prompts, pad_id), 0, layout.prompt_len));
  // Through the decode graph alone, the appended tensors' buffers exist before
  // the prompt: it is written into them (an empty past bound), not copied.
  std::optional<KvCache> cache;
  RunOptions prompt_options;
  if (s.prefill == nullptr) {
    std::vector<KvCache::Spec> specs;
    bool any_appended = false;
    for (size_t i = 0; i < dsig.cache.size(); ++i) {
      const CacheBinding& b = dsig.cache[i];
      const TensorInfo* info = FindInfo(s.decode->inputs(), b.past);
      const TensorInfo* ids = FindInfo(s.decode->inputs(), dsig.input_ids);
      const std::string batch_symbol = ids != nullptr && !ids->shape_symbols.empty() ? ids->shape_symbols[0] : "";
      ASSIGN_OR_RETURN(std::vector<int64_t> shape, EmptyPastShape(*info, b.seq_axis, layout.batch, batch_symbol));
      // Checked up front, so that a cache too large fails before the prompt runs.
      RETURN_IF_ERROR(KvCache::CheckSize({b.past, info->type, shape, b.seq_axis, b.present, false}, capacity, options.max_cache_bytes));
      const bool append = options.inplace_cache && options.append_cache && s.cache_paths[i].appended;
      any_appended |= append;
      specs.push_back({b.past, info->type, shape, b.seq_axis, b.present, append});
      if (append) continue;
      ASSIGN_OR_RETURN(Tensor empty, Tensor::Create(info->type, shape));
      feeds.emplace_back(b.past, std::move(empty));
    }
    if (any_appended) {
      ASSIGN_OR_RETURN(KvCache c, KvCache::Create(std::move(specs), capacity, options.max_cache_bytes));
      cache = std::move(c);
      cache->SetLength(0);
      for (size_t i = 0; i < cache->size(); ++i)
        if (cache->appended(i)) prompt_options.caches.push_back(cache->Binding(i));
    }
  }
  auto start = Clock::now();
  ASSIGN_OR_RETURN(NamedTensors outputs, first.Run(feeds, prompt_options));
  result.prefill_ms = ms_since(start);

  // The presents of the prompt, in decode-binding order (empty for those already in the cache).
  std::vector<Tensor> presents;
  for (size_t i = 0; i < dsig.cache.size(); ++i) {
    if (cache.has_value() && cache->appended(i)) {
      presents.emplace_back();
      continue;
    }
    const std::string& name = s.prefill != nullptr ? psig.cache[s.prefill_present[i]].present : dsig.cache[i].present;
    const Tensor* t = FindTensor(outputs, name);
    if (t == nullptr) return absl::InternalError(absl::StrCat("output ", QuoteName(name), " missing"));
    presents.push_back(*t);
    // The copy loop holds the same sizes (in fresh memory each step): the same limit.
    RETURN_IF_ERROR(KvCache::CheckSize({dsig.cache[i].past, t->type(), t->shape(), dsig.cache[i].seq_axis, dsig.cache[i].present, false}, capacity,
                                       options.max_cache_bytes));
  }
  const Tensor* first_logits = FindTensor(outputs, psig.logits);
  if (first_logits == nullptr) return absl::InternalError("logits missing");
  ASSIGN_OR_RETURN(std::vector<std::span<const float>> rows, LastLogits(*first_logits, layout.batch));
  const int64_t out_vocab = first_logits->shape().back();
  const bool logits_rank3 = first_logits->rank() == 3;

  result.generated_ids.assign(layout.batch, {});
  std::vector<bool> done(layout.batch, false);
  std::vector<int64_t> last(layout.batch, pad_id);
  // Picks each live row's next token from `rows`; false when generation ends.
  auto choose = [&](int64_t step, double ms) {
    TokenEvent event{step, std::vector<int64_t>(layout.batch, -1), ms};
    for (int64_t r = 0; r < layout.batch; ++r) {
      if (done[r]) continue;
      const int64_t id = samplers[r].Next(rows[r]);
      result.generated_ids[r].push_back(id);
      event.tokens[r] = last[r] = id;
      if (id == options.eos_id ||
          std::find(options.stop_ids.begin(), options.stop_ids.end(), id) != options.stop_ids.end())
        done[r] = true;
    }
    const bool go_on = !on_token || on_token(event);
    return go_on && !std::all_of(done.begin(), done.end(), [](bool d) { return d; });
  };
  bool running = choose(0, result.prefill_ms);

  // The cache after the prompt.
  if (options.inplace_cache && !cache.has_value()) {
    std::vector<KvCache::Spec> specs;
    for (size_t i = 0; i < dsig.cache.size(); ++i) {
      const bool append = options.append_cache && s.cache_paths[i].appended &&
                          presents[i].type() == ElementType::kFloat32 && presents[i].rank() == 4;
      specs.push_back({dsig.cache[i].past, presents[i].type(), presents[i].shape(), dsig.cache[i].seq_axis,
                       dsig.cache[i].present, append});
    }
    ASSIGN_OR_RETURN(KvCache c, KvCache::Create(std::move(specs), capacity, options.max_cache_bytes));
    cache = std::move(c);
  }
  if (cache.has_value()) {
    cache->SetLength(layout.prompt_len);
    for (size_t i = 0; i < presents.size(); ++i)
      if (!presents[i].empty()) RETURN_IF_ERROR(cache->Load(i, presents[i]));
    presents.clear();
  }
  RunOptions run_options;  // the appended tensors' bindings; lengths set per step
  if (cache.has_value())
    for (size_t i = 0; i < cache->size(); ++i)
      if (cache->appended(i)) run_options.caches.push_back(cache->Binding(i));
  Tensor logits_buffer;
  if (options.inplace_cache) {
    std::vector<int64_t> shape =
        logits_rank3 ? std::vector<int64_t>{layout.batch, 1, out_vocab} : std::vector<int64_t>{layout.batch, out_vocab};
    ASSIGN_OR_RETURN(logits_buffer, Tensor::Create(ElementType::kFloat32, shape));
  }

  int64_t length = layout.prompt_len;
  int64_t decode_tokens = 0;
  for (int64_t step = 1; running && step < options.max_new_tokens; ++step) {
    for (int64_t r = 0; r < layout.batch; ++r)
      if (done[r]) last[r] = pad_id;
    ASSIGN_OR_RETURN(NamedTensors step_feeds, role_feeds(*s.decode, dsig, last, length, length + 1));
    start = Clock::now();
    if (cache.has_value()) {
      NamedTensorViews into{{dsig.logits, logits_buffer.view()}};
      for (CacheBuffer& c : run_options.caches) c.length = length;
      for (size_t i = 0; i < dsig.cache.size(); ++i) {
        if (cache->appended(i)) continue;
        ASSIGN_OR_RETURN(Tensor past, cache->Past(i));
        step_feeds.emplace_back(dsig.cache[i].past, std::move(past));
        ASSIGN_OR_RETURN(TensorView next, cache->Next(i, length + 1));
        into.emplace_back(dsig.cache[i].present, next);
      }
      RETURN_IF_ERROR(s.decode->RunInto(step_feeds, into, run_options));
      cache->Advance(length + 1);
      ASSIGN_OR_RETURN(rows, LastLogits(logits_buffer, layout.batch));
    } else {
      // The comparison loop: presents come back in fresh memory and are copied into the next past.
      for (size_t i = 0; i < dsig.cache.size(); ++i) step_feeds.emplace_back(dsig.cache[i].past, presents[i].Clone());
      ASSIGN_OR_RETURN(outputs, s.decode->Run(step_feeds));
      for (size_t i = 0; i < dsig.cache.size(); ++i) presents[i] = *FindTensor(outputs, dsig.cache[i].present);
      ASSIGN_OR_RETURN(rows, LastLogits(*FindTensor(outputs, dsig.logits), layout.batch));
    }
    ++length;
    const double ms = ms_since(start);
    result.step_ms.push_back(ms);
    decode_tokens += std::count(done.begin(), done.end(), false);
    running = choose(step, ms);
  }
  result.token_ms_median = Median(result.step_ms);
  result.token_ms_p90 = Percentile(result.step_ms, 0.9);
  double decode_ms = 0;
  for (double ms : result.step_ms) decode_ms += ms;
  result.tokens_per_s = decode_ms > 0 ? decode_tokens * 1000.0 / decode_ms : 0;
  return result;
}

}  // namespace attune

// attune::DecodeBatch: the continuous-batching loop's steps. The batch's
// cache is one dense past tensor per cache binding, rows left-padded to the
// longest sequence and masked; each step's presents become the next step's
// pasts as they are (no copy). The layout is rebuilt only when a sequence
// joins or leaves: each row's valid positions are copied right-aligned into
// tensors as wide as the longest remaining sequence.
#include "attune/decode_batch.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <optional>

#include "absl/strings/str_cat.h"
#include "core/common/escape.h"
#include "core/common/status_macros.h"
#include "engine/generate/kv_cache.h"
#include "engine/generate/sampler.h"
#include "engine/generate/step_inputs.h"

namespace attune {
namespace {

// Padded positions (prompts × the longest) one prefill run takes at most:
// prompts joining together share a run, so the weights are read once for all
// of them and the products take the GEMM's rate; runs stay small enough that
// the activations (and attention scores) of one remain modest.
constexpr int64_t kPrefillTokens = 2048;

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

// Copies `length` positions of one batch row, right-aligned, between cache
// tensors of widths src_width and dst_width on `axis` (batch on axis 0).
void CopyRow(const Tensor& src, int64_t src_row, int64_t src_width, Tensor& dst, int64_t dst_row, int64_t dst_width,
             int64_t length, int axis) {
  const std::vector<int64_t>& shape = dst.shape();
  int64_t outer = 1, inner = static_cast<int64_t>(ElementSize(dst.type()));
  for (int d = 1; d < axis; ++d) outer *= shape[d];
  for (size_t d = axis + 1; d < shape.size(); ++d) inner *= shape[d];
  const auto* s = static_cast<const unsigned char*>(src.raw_data());
  auto* t = static_cast<unsigned char*>(dst.raw_data());
  for (int64_t o = 0; o < outer; ++o) {
    const int64_t from = ((src_row * outer + o) * src_width + src_width - length) * inner;
    const int64_t to = ((dst_row * outer + o) * dst_width + dst_width - length) * inner;
    std::memcpy(t + to, s + from, static_cast<size_t>(length * inner));
  }
}

}  // namespace

struct ATTUNE_HIDDEN DecodeBatch::State {
  const Session* decode = nullptr;
  DecoderSignature sig;
  ElementType ids_type = ElementType::kInt64, mask_type = ElementType::kInt64, pos_type = ElementType::kInt64;
  std::vector<const TensorInfo*> past_info;  // per cache binding
  bool unequal_lengths = true;

  struct Sequence {
    int64_t length = 0;  // positions in the cache
    int64_t last = 0;    // the token the next step feeds
    int64_t limit = 0;   // the longest the cache may grow
    Sampler sampler;
    std::vector<Tensor> own;  // the prompt's presents until the sequence joins a group
    int group = -1, row = -1;
  };
  struct Group {
    std::vector<int64_t> ids;  // row order
    std::vector<Tensor> past;  // per cache binding, (rows, ..., width, ...)
    int64_t width = 0;
  };
  std::map<int64_t, Sequence> sequences;
  std::vector<Group> groups;
  bool dirty = false;

  /// The sequence's length limit, or why it cannot join.
  absl::StatusOr<int64_t> Check(const std::vector<int64_t>& prompt, const GenerationOptions& options) const;
  /// Runs the prompts joining[run[..]] as one batch and adds them.
  absl::Status Prefill(const std::vector<Joining>& joining, const std::vector<size_t>& run,
                       const std::vector<int64_t>& limits, std::vector<absl::StatusOr<int64_t>>& firsts);
  absl::Status Rebuild();
  absl::Status StepGroup(Group& group, std::vector<std::pair<int64_t, int64_t>>& tokens);
  absl::StatusOr<std::vector<int64_t>> EmptyPastShape(size_t i) const;
};

DecodeBatch::DecodeBatch(std::unique_ptr<State> state) : state_(std::move(state)) {}
DecodeBatch::~DecodeBatch() = default;

const DecoderSignature& DecodeBatch::signature() const { return state_->sig; }
bool DecodeBatch::batches_unequal_lengths() const { return state_->unequal_lengths; }
size_t DecodeBatch::size() const { return state_->sequences.size(); }

absl::StatusOr<std::unique_ptr<DecodeBatch>> DecodeBatch::Create(const Session& decode,
                                                                 const NameOverrides& overrides) {
  auto state = std::make_unique<State>();
  state->decode = &decode;
  ASSIGN_OR_RETURN(state->sig, FindDecoderSignature(decode, overrides, true));
  const DecoderSignature& sig = state->sig;
  if (!sig.encoder_cache.empty())
    return absl::InvalidArgumentError("an encoder-decoder model: continuous batching runs decoder-only models");
  for (const TensorInfo& in : decode.inputs()) {
    bool fed = in.name == sig.input_ids || in.name == sig.attention_mask || in.name == sig.position_ids;
    for (const CacheBinding& b : sig.cache) fed |= in.name == b.past;
    if (!fed)
      return absl::InvalidArgumentError(absl::StrCat("input ", QuoteName(in.name),
                                                     " is neither token ids, attention_mask, position_ids nor a "
                                                     "past cache tensor; it cannot be fed"));
  }
  if (sig.attention_mask.empty())
    return absl::InvalidArgumentError("the model has no attention_mask input: sequences cannot share a batch");
  state->ids_type = FindInfo(decode.inputs(), sig.input_ids)->type;
  state->mask_type = FindInfo(decode.inputs(), sig.attention_mask)->type;
  if (!sig.position_ids.empty()) state->pos_type = FindInfo(decode.inputs(), sig.position_ids)->type;
  state->unequal_lengths = !sig.position_ids.empty() || sig.positions_from_mask;
  for (const CacheBinding& b : sig.cache) {
    const TensorInfo* info = FindInfo(decode.inputs(), b.past);
    if (info == nullptr || !info->has_shape || info->shape.size() < 2 || b.seq_axis < 1 ||
        b.seq_axis >= static_cast<int>(info->shape.size()))
      return absl::InvalidArgumentError(
          absl::StrCat("past input ", QuoteName(b.past), " is not (batch, ..., seq, ...) with a declared shape"));
    state->past_info.push_back(info);
  }
  return std::unique_ptr<DecodeBatch>(new DecodeBatch(std::move(state)));
}

absl::StatusOr<std::vector<int64_t>> DecodeBatch::State::EmptyPastShape(size_t i) const {
  std::vector<int64_t> shape = past_info[i]->shape;
  shape[0] = 1;
  shape[sig.cache[i].seq_axis] = 0;
  for (int64_t d : shape)
    if (d < 0)
      return absl::InvalidArgumentError(absl::StrCat("past input ", QuoteName(past_info[i]->name),
                                                     " has a symbolic dimension besides batch and sequence"));
  return shape;
}

absl::StatusOr<int64_t> DecodeBatch::State::Check(const std::vector<int64_t>& prompt,
                                                 const GenerationOptions& options) const {
  if (prompt.empty()) return absl::InvalidArgumentError("the prompt is empty");
  if (options.max_new_tokens < 1) return absl::InvalidArgumentError("max_new_tokens must be at least 1");
  if (!options.greedy && !(options.temperature > 0))
    return absl::InvalidArgumentError("temperature must be positive when sampling");
  if (!(options.top_p > 0) || options.top_p > 1) return absl::InvalidArgumentError("top_p must be in (0, 1]");
  const int64_t vocab = sig.vocab_size;
  for (int64_t t : prompt)
    if (t < 0 || (vocab > 0 && t >= vocab))
      return absl::InvalidArgumentError(absl::StrCat("token id ", t, " is outside the vocabulary [0, ",
                                                     vocab > 0 ? absl::StrCat(vocab) : "?", ")"));
  const int64_t p = static_cast<int64_t>(prompt.size());
  int64_t context = sig.context;
  if (options.max_context > 0) context = context > 0 ? std::min(context, options.max_context) : options.max_context;
  const int64_t limit = std::max(p, p + options.max_new_tokens - 1);
  if (context > 0 && limit > context)
    return absl::InvalidArgumentError(absl::StrCat("prompt (", p, ") + max new tokens (", options.max_new_tokens,
                                                   ") - 1 = ", limit, " exceeds the context of ", context));
  for (size_t i = 0; i < sig.cache.size(); ++i) {
    ASSIGN_OR_RETURN(std::vector<int64_t> shape, EmptyPastShape(i));
    RETURN_IF_ERROR(KvCache::CheckSize(
        {sig.cache[i].past, past_info[i]->type, shape, sig.cache[i].seq_axis, sig.cache[i].present, false}, limit,
        options.max_cache_bytes));
  }
  return limit;
}

absl::Status DecodeBatch::State::Prefill(const std::vector<Joining>& joining, const std::vector<size_t>& run,
                                         const std::vector<int64_t>& limits,
                                         std::vector<absl::StatusOr<int64_t>>& firsts) {
  // Left-padded to the longest prompt and masked, as the decode steps are.
  const int64_t rows = static_cast<int64_t>(run.size());
  BatchLayout layout;
  layout.batch = rows;
  std::vector<std::vector<int64_t>> prompts;
  for (size_t j : run) {
    prompts.push_back(*joining[j].prompt);
    layout.prompt_len = std::max<int64_t>(layout.prompt_len, static_cast<int64_t>(prompts.back().size()));
  }
  for (const auto& prompt : prompts) layout.pad.push_back(layout.prompt_len - static_cast<int64_t>(prompt.size()));
  const int64_t width = layout.prompt_len;
  NamedTensors feeds;
  ASSIGN_OR_RETURN(Tensor ids, MakeMatrix(ids_type, rows, width, layout.PromptIds(prompts, prompts[0][0])));
  feeds.emplace_back(sig.input_ids, std::move(ids));
  ASSIGN_OR_RETURN(Tensor mask, MakeMatrix(mask_type, rows, width, layout.Mask(width)));
  feeds.emplace_back(sig.attention_mask, std::move(mask));
  if (!sig.position_ids.empty()) {
    ASSIGN_OR_RETURN(Tensor pos, MakeMatrix(pos_type, rows, width, layout.Positions(0, width)));
    feeds.emplace_back(sig.position_ids, std::move(pos));
  }
  for (size_t i = 0; i < sig.cache.size(); ++i) {
    ASSIGN_OR_RETURN(std::vector<int64_t> shape, EmptyPastShape(i));
    shape[0] = rows;
    ASSIGN_OR_RETURN(Tensor empty, Tensor::Create(past_info[i]->type, shape));
    feeds.emplace_back(sig.cache[i].past, std::move(empty));
  }
  ASSIGN_OR_RETURN(NamedTensors outputs, decode->Run(feeds));
  const Tensor* logits = FindTensor(outputs, sig.logits);
  if (logits == nullptr || logits->type() != ElementType::kFloat32 || logits->rank() < 2 ||
      logits->shape()[0] != rows)
    return absl::InternalError("the prompts' logits are missing or not float32 (batch, [seq,] vocab)");
  std::vector<const Tensor*> presents;
  for (const CacheBinding& b : sig.cache) {
    const Tensor* present = FindTensor(outputs, b.present);
    if (present == nullptr || present->rank() <= b.seq_axis || present->shape()[0] != rows ||
        present->shape()[b.seq_axis] != width)
      return absl::InternalError(absl::StrCat("present ", QuoteName(b.present), " is missing or not of ", width,
                                              " positions"));
    presents.push_back(present);
  }
  const int64_t v = logits->shape().back();
  const int64_t per_row = logits->num_elements() / rows;
  for (int64_t r = 0; r < rows; ++r) {
    const Joining& join = joining[run[r]];
    const GenerationOptions& options = *join.options;
    const int64_t p = static_cast<int64_t>(join.prompt->size());
    Sequence seq{p, 0, limits[run[r]],
                 Sampler({options.greedy, options.temperature, options.top_k, options.top_p},
                         options.seed ^ 0xa0761d6478bd642full),
                 {}};
    seq.last = seq.sampler.Next({logits->data<float>() + r * per_row + per_row - v, static_cast<size_t>(v)});
    for (size_t i = 0; i < sig.cache.size(); ++i) {
      if (rows == 1) {
        seq.own.push_back(*presents[i]);
        continue;
      }
      std::vector<int64_t> shape = presents[i]->shape();
      shape[0] = 1;
      shape[sig.cache[i].seq_axis] = p;
      ASSIGN_OR_RETURN(Tensor own, Tensor::Create(presents[i]->type(), shape));
      CopyRow(*presents[i], r, width, own, 0, p, p, sig.cache[i].seq_axis);
      seq.own.push_back(std::move(own));
    }
    firsts[run[r]] = seq.last;
    sequences.emplace(join.id, std::move(seq));
  }
  dirty = true;
  return absl::OkStatus();
}

std::vector<absl::StatusOr<int64_t>> DecodeBatch::AddAll(const std::vector<Joining>& joining) {
  State& s = *state_;
  std::vector<absl::StatusOr<int64_t>> firsts(joining.size(), absl::InternalError("not prefilled"));
  std::vector<int64_t> limits(joining.size(), 0);
  // Runs: prompts ordered by length (least padding), packed while the padded
  // run stays within kPrefillTokens; on a graph whose positions padding would
  // shift, only prompts of one length share a run.
  std::vector<size_t> order;
  for (size_t j = 0; j < joining.size(); ++j) {
    bool taken = s.sequences.count(joining[j].id) != 0;
    for (size_t i = 0; i < j && !taken; ++i) taken = joining[i].id == joining[j].id && limits[i] > 0;
    absl::StatusOr<int64_t> limit =
        taken ? absl::InvalidArgumentError(absl::StrCat("sequence ", joining[j].id, " is already in"))
              : s.Check(*joining[j].prompt, *joining[j].options);
    if (!limit.ok()) {
      firsts[j] = limit.status();
      continue;
    }
    limits[j] = *limit;
    order.push_back(j);
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t x, size_t y) { return joining[x].prompt->size() < joining[y].prompt->size(); });
  for (size_t begin = 0; begin < order.size();) {
    const int64_t first_len = static_cast<int64_t>(joining[order[begin]].prompt->size());
    size_t end = begin + 1;
    while (end < order.size()) {
      const int64_t len = static_cast<int64_t>(joining[order[end]].prompt->size());
      if ((!s.unequal_lengths && len != first_len) ||
          static_cast<int64_t>(end - begin + 1) * len > kPrefillTokens)
        break;
      ++end;
    }
    const std::vector<size_t> run(order.begin() + static_cast<std::ptrdiff_t>(begin),
                                  order.begin() + static_cast<std::ptrdiff_t>(end));
    absl::Status status = s.Prefill(joining, run, limits, firsts);
    if (!status.ok())
      for (size_t j : run) firsts[j] = status;
    begin = end;
  }
  return firsts;
}

absl::StatusOr<int64_t> DecodeBatch::Add(int64_t id, const std::vector<int64_t>& prompt,
                                         const GenerationOptions& options) {
  return AddAll({Joining{id, &prompt, &options}})[0];
}

void DecodeBatch::Remove(int64_t id) {
  if (state_->sequences.erase(id) != 0) state_->dirty = true;
}

absl::Status DecodeBatch::State::Rebuild() {
  // Rows sharing a run: every sequence, or those of one length when padding would shift positions.
  std::map<int64_t, std::vector<int64_t>> members;  // key: 0, or the length
  for (const auto& [id, seq] : sequences) members[unequal_lengths ? 0 : seq.length].push_back(id);
  std::vector<Group> next;
  for (const auto& [key, ids] : members) {
    Group g;
    g.ids = ids;
    for (int64_t id : ids) g.width = std::max(g.width, sequences.at(id).length);
    for (size_t i = 0; i < sig.cache.size(); ++i) {
      std::vector<int64_t> shape = past_info[i]->shape;
      const Sequence& any = sequences.at(ids[0]);
      const Tensor& like = any.own.empty() ? groups[any.group].past[i] : any.own[i];
      shape = like.shape();
      shape[0] = static_cast<int64_t>(ids.size());
      shape[sig.cache[i].seq_axis] = g.width;
      ASSIGN_OR_RETURN(Tensor past, Tensor::Create(like.type(), shape));
      for (size_t r = 0; r < ids.size(); ++r) {
        const Sequence& seq = sequences.at(ids[r]);
        if (!seq.own.empty()) {
          CopyRow(seq.own[i], 0, seq.length, past, static_cast<int64_t>(r), g.width, seq.length, sig.cache[i].seq_axis);
        } else {
          const Group& old = groups[seq.group];
          CopyRow(old.past[i], seq.row, old.width, past, static_cast<int64_t>(r), g.width, seq.length,
                  sig.cache[i].seq_axis);
        }
      }
      g.past.push_back(std::move(past));
    }
    next.push_back(std::move(g));
  }
  groups = std::move(next);
  for (size_t g = 0; g < groups.size(); ++g)
    for (size_t r = 0; r < groups[g].ids.size(); ++r) {
      Sequence& seq = sequences.at(groups[g].ids[r]);
      seq.group = static_cast<int>(g);
      seq.row = static_cast<int>(r);
      seq.own.clear();
    }
  dirty = false;
  return absl::OkStatus();
}

absl::Status DecodeBatch::State::StepGroup(Group& g, std::vector<std::pair<int64_t, int64_t>>& tokens) {
  const int64_t rows = static_cast<int64_t>(g.ids.size());
  std::vector<int64_t> last, mask, pos;
  for (int64_t id : g.ids) {
    const Sequence& seq = sequences.at(id);
    if (seq.length >= seq.limit)
      return absl::FailedPreconditionError(absl::StrCat("sequence ", id, " is at its length limit of ", seq.limit));
    last.push_back(seq.last);
    pos.push_back(seq.length);
    for (int64_t j = 0; j <= g.width; ++j) mask.push_back(j >= g.width - seq.length ? 1 : 0);
  }
  NamedTensors feeds;
  ASSIGN_OR_RETURN(Tensor ids_t, MakeMatrix(ids_type, rows, 1, last));
  feeds.emplace_back(sig.input_ids, std::move(ids_t));
  ASSIGN_OR_RETURN(Tensor mask_t, MakeMatrix(mask_type, rows, g.width + 1, mask));
  feeds.emplace_back(sig.attention_mask, std::move(mask_t));
  if (!sig.position_ids.empty()) {
    ASSIGN_OR_RETURN(Tensor pos_t, MakeMatrix(pos_type, rows, 1, pos));
    feeds.emplace_back(sig.position_ids, std::move(pos_t));
  }
  for (size_t i = 0; i < sig.cache.size(); ++i) feeds.emplace_back(sig.cache[i].past, g.past[i]);
  ASSIGN_OR_RETURN(NamedTensors outputs, decode->Run(feeds));
  for (size_t i = 0; i < sig.cache.size(); ++i) {
    const Tensor* present = FindTensor(outputs, sig.cache[i].present);
    if (present == nullptr || present->shape()[0] != rows ||
        present->shape()[sig.cache[i].seq_axis] != g.width + 1)
      return absl::InternalError(absl::StrCat("present ", QuoteName(sig.cache[i].present), " is missing or not ",
                                              g.width + 1, " positions"));
    g.past[i] = *present;
  }
  ++g.width;
  const Tensor* logits = FindTensor(outputs, sig.logits);
  if (logits == nullptr || logits->type() != ElementType::kFloat32 || logits->shape()[0] != rows)
    return absl::InternalError("the step's logits are missing or not float32 (batch, [1,] vocab)");
  const int64_t v = logits->shape().back();
  const int64_t per_row = logits->num_elements() / rows;
  for (int64_t r = 0; r < rows; ++r) {
    Sequence& seq = sequences.at(g.ids[r]);
    seq.last = seq.sampler.Next({logits->data<float>() + r * per_row + per_row - v, static_cast<size_t>(v)});
    ++seq.length;
    tokens.emplace_back(g.ids[r], seq.last);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::pair<int64_t, int64_t>>> DecodeBatch::Step() {
  State& s = *state_;
  if (s.dirty) RETURN_IF_ERROR(s.Rebuild());
  std::vector<std::pair<int64_t, int64_t>> tokens;
  for (State::Group& g : s.groups) RETURN_IF_ERROR(s.StepGroup(g, tokens));
  // Equal-length groups grew together; rows of one length stay one group.
  return tokens;
}

}  // namespace attune

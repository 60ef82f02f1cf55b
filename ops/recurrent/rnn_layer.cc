// RNN, GRU and LSTM (every opset to 22): one layer, forward, reverse or
// bidirectional, over X [seq, batch, input] (layout 0) or [batch, seq, input]
// (layout 1), with W [dirs, G * hidden, input], R [dirs, G * hidden, hidden],
// B [dirs, 2 * G * hidden] (Wb then Rb), sequence_lens [batch], initial_h
// (and LSTM's initial_c) [dirs, batch, hidden] ([batch, dirs, hidden] in
// layout 1) and LSTM's peepholes P [dirs, 3 * hidden]. Gates, in ONNX's order:
//   RNN  (G=1): H = f(x W^T + h R^T + Wb + Rb)
//   GRU  (G=3, z r h): z = f(..z), r = f(..r),
//        n = g(x Wh^T + (r * h) Rh^T + Rbh + Wbh)       linear_before_reset = 0
//        n = g(x Wh^T + r * (h Rh^T + Rbh) + Wbh)       linear_before_reset = 1
//        H = (1 - z) * n + z * h
//   LSTM (G=4, i o f c): i = f(..i + Pi * C), f = f(..f + Pf * C) (or 1 - i
//        with input_forget), c~ = g(..c), C' = f * C + i * c~,
//        o = f(..o + Po * C'), H = o * h(C')
// `clip` bounds every gate's pre-activation. A batch entry stops after its
// sequence length; Y is zero past it and Y_h / Y_c keep the last state.
// Everything is computed in double.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/common/escape.h"
#include "core/common/status_macros.h"
#include "core/common/strings.h"
#include "ops/common/float_values.h"
#include "ops/common/node_label.h"
#include "ops/recurrent/kernels.h"
#include "ops/recurrent/rnn_activation.h"

namespace attune {
namespace {

enum Input { kX, kW, kR, kB, kSequenceLens, kInitialH, kInitialC, kPeepholes };

struct LayerAttributes {
  RnnKind kind = RnnKind::kRnn;
  int gates = 1;
  int directions = 1;
  bool reverse_only = false;
  int64_t hidden = -1;  // -1: from R
  int layout = 0;
  double clip = 0;  // 0: none
  bool linear_before_reset = false;
  bool input_forget = false;
  std::vector<RnnActivation> activations;  // per direction, RNN 1, GRU 2, LSTM 3
};

struct Sizes {
  int64_t seq = 0, batch = 0, input = 0, hidden = 0;
};

// Offsets of the layout-dependent tensors.
struct Layout {
  Sizes s;
  int dirs;
  int layout;
  int64_t X(int64_t t, int64_t b) const { return (layout == 0 ? t * s.batch + b : b * s.seq + t) * s.input; }
  int64_t Y(int64_t t, int d, int64_t b) const {
    return (layout == 0 ? (t * dirs + d) * s.batch + b : (b * s.seq + t) * dirs + d) * s.hidden;
  }
  int64_t State(int d, int64_t b) const { return (layout == 0 ? d * s.batch + b : b * dirs + d) * s.hidden; }
};

struct Weights {
  std::vector<double> x, w, r, bias, h0, c0, p;
  std::vector<int64_t> lengths;
};

class RnnLayerKernel final : public Kernel {
 public:
  RnnLayerKernel(std::string label, LayerAttributes attrs) : label_(std::move(label)), a_(std::move(attrs)) {}

  absl::Status Run(KernelContext& ctx) const override {
    ASSIGN_OR_RETURN(Sizes s, CheckShapes(ctx));
    ASSIGN_OR_RETURN(Weights wt, Load(ctx, s));
    const Layout lay{s, a_.directions, a_.layout};
    const int64_t h_size = s.hidden;
    std::vector<double> y(static_cast<size_t>(s.seq * a_.directions * s.batch * h_size), 0.0);
    std::vector<double> y_h(static_cast<size_t>(a_.directions * s.batch * h_size));
    std::vector<double> y_c(y_h.size());
    const int64_t g_size = a_.gates * h_size;
    std::vector<double> xw(g_size), hr(g_size), gate(g_size), h(h_size), c(h_size), rh(h_size);
    for (int d = 0; d < a_.directions; ++d) {
      const bool reverse = a_.reverse_only || d == 1;
      const double* w = wt.w.data() + d * g_size * s.input;
      const double* r = wt.r.data() + d * g_size * h_size;
      const double* wb = wt.bias.data() + d * 2 * g_size;
      const double* rb = wb + g_size;
      const double* p = wt.p.empty() ? nullptr : wt.p.data() + d * 3 * h_size;
      const RnnActivation* act = a_.activations.data() + d * (a_.kind == RnnKind::kRnn ? 1 : a_.kind == RnnKind::kGru ? 2 : 3);
      for (int64_t b = 0; b < s.batch; ++b) {
        const int64_t len = wt.lengths.empty() ? s.seq : wt.lengths[b];
        std::copy_n(wt.h0.data() + lay.State(d, b), h_size, h.begin());
        std::copy_n(wt.c0.data() + lay.State(d, b), h_size, c.begin());
        for (int64_t step = 0; step < len; ++step) {
          const int64_t t = reverse ? len - 1 - step : step;
          const double* xt = wt.x.data() + lay.X(t, b);
          for (int64_t g = 0; g < g_size; ++g) {
            double sx = wb[g], sh = rb[g];
            for (int64_t i = 0; i < s.input; ++i) sx += w[g * s.input + i] * xt[i];
            for (int64_t i = 0; i < h_size; ++i) sh += r[g * h_size + i] * h[i];
            xw[g] = sx, hr[g] = sh;
          }
          Step(act, p, r, rb, xw, hr, gate, rh, h, c);
          std::copy_n(h.begin(), h_size, y.begin() + lay.Y(t, d, b));
        }
        std::copy_n(h.begin(), h_size, y_h.begin() + lay.State(d, b));
        std::copy_n(c.begin(), h_size, y_c.begin() + lay.State(d, b));
      }
    }
    const ElementType type = ctx.input(kX)->type();
    const std::vector<int64_t> y_shape = a_.layout == 0 ? std::vector<int64_t>{s.seq, a_.directions, s.batch, h_size}
                                                        : std::vector<int64_t>{s.batch, s.seq, a_.directions, h_size};
    const std::vector<int64_t> state_shape = a_.layout == 0 ? std::vector<int64_t>{a_.directions, s.batch, h_size}
                                                            : std::vector<int64_t>{s.batch, a_.directions, h_size};
    const std::vector<double>* values[3] = {&y, &y_h, &y_c};
    for (int o = 0; o < ctx.num_outputs() && o < 3; ++o) {
      if (!ctx.output_wanted(o)) continue;
      ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutputForOverwrite(o, type, o == 0 ? y_shape : state_shape));
      RETURN_IF_ERROR(StoreDoubles(*values[o], *out, absl::StrCat(label_, ": output ", o)));
    }
    return absl::OkStatus();
  }

 private:
  double Clip(double v) const { return a_.clip > 0 ? std::clamp(v, -a_.clip, a_.clip) : v; }

  // One time step of one batch entry: xw = x W^T + Wb and hr = h R^T + Rb per
  // gate row; updates h (and c).
  void Step(const RnnActivation* act, const double* p, const double* r, const double* rb, const std::vector<double>& xw,
            const std::vector<double>& hr, std::vector<double>& gate, std::vector<double>& rh, std::vector<double>& h,
            std::vector<double>& c) const {
    const int64_t hs = static_cast<int64_t>(h.size());
    if (a_.kind == RnnKind::kRnn) {
      for (int64_t j = 0; j < hs; ++j) h[j] = act[0](Clip(xw[j] + hr[j]));
      return;
    }
    if (a_.kind == RnnKind::kGru) {
      for (int64_t j = 0; j < 2 * hs; ++j) gate[j] = act[0](Clip(xw[j] + hr[j]));  // z, r
      const double* z = gate.data();
      const double* rg = gate.data() + hs;
      if (a_.linear_before_reset) {
        for (int64_t j = 0; j < hs; ++j) gate[2 * hs + j] = act[1](Clip(xw[2 * hs + j] + rg[j] * hr[2 * hs + j]));
      } else {
        for (int64_t j = 0; j < hs; ++j) rh[j] = rg[j] * h[j];
        for (int64_t j = 0; j < hs; ++j) {
          double sum = rb[2 * hs + j];
          for (int64_t i = 0; i < hs; ++i) sum += r[(2 * hs + j) * hs + i] * rh[i];
          gate[2 * hs + j] = act[1](Clip(xw[2 * hs + j] + sum));
        }
      }
      for (int64_t j = 0; j < hs; ++j) h[j] = (1 - z[j]) * gate[2 * hs + j] + z[j] * h[j];
      return;
    }
    for (int64_t j = 0; j < hs; ++j) {  // LSTM: gates i o f c, peepholes i o f
      const double pi = p ? p[j] : 0, po = p ? p[hs + j] : 0, pf = p ? p[2 * hs + j] : 0;
      const double i = act[0](Clip(xw[j] + hr[j] + pi * c[j]));
      const double f = a_.input_forget ? 1 - i : act[0](Clip(xw[2 * hs + j] + hr[2 * hs + j] + pf * c[j]));
      const double cand = act[1](Clip(xw[3 * hs + j] + hr[3 * hs + j]));
      c[j] = f * c[j] + i * cand;
      const double o = act[0](Clip(xw[hs + j] + hr[hs + j] + po * c[j]));
      h[j] = o * act[2](c[j]);
    }
  }

  absl::Status CheckInput(const KernelContext& ctx, int i, const char* name, const std::vector<int64_t>& want) const {
    const Tensor* t = ctx.input(i);
    if (t == nullptr) return absl::OkStatus();
    if (t->shape() != want)
      return absl::InvalidArgumentError(absl::StrCat(label_, ": input ", name, " has shape ", ShapeToString(t->shape()),
                                                     "; expected ", ShapeToString(want)));
    if (i != kSequenceLens && t->type() != ctx.input(kX)->type())
      return absl::InvalidArgumentError(absl::StrCat(label_, ": input ", name, " has type ", ElementTypeName(t->type()),
                                                     "; X has ", ElementTypeName(ctx.input(kX)->type())));
    return absl::OkStatus();
  }

  absl::StatusOr<Sizes> CheckShapes(const KernelContext& ctx) const {
    const Tensor* x = ctx.input(kX);
    const Tensor* w = ctx.input(kW);
    const Tensor* r = ctx.input(kR);
    if (x == nullptr || w == nullptr || r == nullptr)
      return absl::InvalidArgumentError(absl::StrCat(label_, ": needs X, W and R"));
    if (x->shape().size() != 3)
      return absl::InvalidArgumentError(absl::StrCat(label_, ": input X has shape ", ShapeToString(x->shape()),
                                                     "; expected rank 3"));
    Sizes s;
    s.seq = x->shape()[a_.layout == 0 ? 0 : 1];
    s.batch = x->shape()[a_.layout == 0 ? 1 : 0];
    s.input = x->shape()[2];
    s.hidden = a_.hidden >= 0 ? a_.hidden : (r->shape().size() == 3 ? r->shape()[2] : -1);
    if (s.hidden < 0)
      return absl::InvalidArgumentError(absl::StrCat(label_, ": input R has shape ", ShapeToString(r->shape()),
                                                     "; expected [num_directions, gates * hidden, hidden]"));
    const int64_t dirs = a_.directions, g = a_.gates * s.hidden, hs = s.hidden;
    RETURN_IF_ERROR(CheckInput(ctx, kW, "W", {dirs, g, s.input}));
    RETURN_IF_ERROR(CheckInput(ctx, kR, "R", {dirs, g, hs}));
    RETURN_IF_ERROR(CheckInput(ctx, kB, "B", {dirs, 2 * g}));
    RETURN_IF_ERROR(CheckInput(ctx, kSequenceLens, "sequence_lens", {s.batch}));
    const std::vector<int64_t> state = a_.layout == 0 ? std::vector<int64_t>{dirs, s.batch, hs}
                                                      : std::vector<int64_t>{s.batch, dirs, hs};
    RETURN_IF_ERROR(CheckInput(ctx, kInitialH, "initial_h", state));
    if (a_.kind == RnnKind::kLstm) {
      RETURN_IF_ERROR(CheckInput(ctx, kInitialC, "initial_c", state));
      RETURN_IF_ERROR(CheckInput(ctx, kPeepholes, "P", {dirs, 3 * hs}));
    }
    return s;
  }

  absl::StatusOr<Weights> Load(const KernelContext& ctx, const Sizes& s) const {
    Weights wt;
    auto load = [&](int i, const char* name, std::vector<double>& into, size_t zeros) -> absl::Status {
      if (ctx.input(i) == nullptr) {
        into.assign(zeros, 0.0);
        return absl::OkStatus();
      }
      ASSIGN_OR_RETURN(into, LoadAsDoubles(*ctx.input(i), absl::StrCat(label_, ": input ", name)));
      return absl::OkStatus();
    };
    const size_t state = static_cast<size_t>(a_.directions * s.batch * s.hidden);
    RETURN_IF_ERROR(load(kX, "X", wt.x, 0));
    RETURN_IF_ERROR(load(kW, "W", wt.w, 0));
    RETURN_IF_ERROR(load(kR, "R", wt.r, 0));
    RETURN_IF_ERROR(load(kB, "B", wt.bias, static_cast<size_t>(a_.directions * 2 * a_.gates * s.hidden)));
    RETURN_IF_ERROR(load(kInitialH, "initial_h", wt.h0, state));
    const bool lstm = a_.kind == RnnKind::kLstm;
    if (lstm) {
      RETURN_IF_ERROR(load(kInitialC, "initial_c", wt.c0, state));
      if (ctx.input(kPeepholes) != nullptr) RETURN_IF_ERROR(load(kPeepholes, "P", wt.p, 0));
    } else {
      wt.c0.assign(state, 0.0);
    }
    if (const Tensor* lens = ctx.input(kSequenceLens); lens != nullptr) {
      if (lens->type() != ElementType::kInt32 && lens->type() != ElementType::kInt64)
        return absl::InvalidArgumentError(absl::StrCat(label_, ": input sequence_lens has type ",
                                                       ElementTypeName(lens->type()), "; expected int32"));
      for (int64_t b = 0; b < s.batch; ++b) {
        const int64_t v = lens->type() == ElementType::kInt32 ? lens->data<int32_t>()[b] : lens->data<int64_t>()[b];
        if (v < 0 || v > s.seq)
          return absl::InvalidArgumentError(absl::StrCat(label_, ": input sequence_lens[", b, "] is ", v,
                                                         "; it must be in [0, ", s.seq, "]"));
        wt.lengths.push_back(v);
      }
    }
    return wt;
  }

  std::string label_;
  LayerAttributes a_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Kernel>> MakeRnnLayerKernel(const KernelInfo& info, RnnKind kind) {
  std::string label = NodeLabel(info);
  if (info.num_inputs() < 3 || !info.input_present[kX] || !info.input_present[kW] || !info.input_present[kR])
    return absl::InvalidArgumentError(absl::StrCat(label, ": needs inputs X, W and R"));
  LayerAttributes a;
  a.kind = kind;
  a.gates = kind == RnnKind::kRnn ? 1 : kind == RnnKind::kGru ? 3 : 4;
  ASSIGN_OR_RETURN(std::string direction, info.attrs().GetString("direction", "forward"));
  if (direction == "bidirectional") a.directions = 2;
  else if (direction == "reverse") a.reverse_only = true;
  else if (direction != "forward")
    return absl::InvalidArgumentError(absl::StrCat(label, ": attribute 'direction' has the unknown value ",
                                                   QuoteName(direction), "; expected forward, reverse or bidirectional"));
  if (info.attrs().Has("hidden_size")) {
    ASSIGN_OR_RETURN(a.hidden, info.attrs().GetInt("hidden_size"));
    if (a.hidden <= 0)
      return absl::InvalidArgumentError(absl::StrCat(label, ": attribute 'hidden_size' is ", a.hidden, "; it must be > 0"));
  }
  ASSIGN_OR_RETURN(int64_t layout, info.attrs().GetInt("layout", 0));
  if (layout != 0 && layout != 1)
    return absl::InvalidArgumentError(absl::StrCat(label, ": attribute 'layout' is ", layout, "; expected 0 or 1"));
  a.layout = static_cast<int>(layout);
  if (info.attrs().Has("clip")) {
    ASSIGN_OR_RETURN(float clip, info.attrs().GetFloat("clip"));
    if (!(clip > 0))
      return absl::InvalidArgumentError(absl::StrCat(label, ": attribute 'clip' is ", clip, "; it must be > 0"));
    a.clip = clip;
  }
  ASSIGN_OR_RETURN(int64_t lbr, info.attrs().GetInt("linear_before_reset", 0));
  a.linear_before_reset = lbr != 0;
  ASSIGN_OR_RETURN(int64_t input_forget, info.attrs().GetInt("input_forget", 0));
  a.input_forget = input_forget != 0;
  if (info.attrs().Has("output_sequence")) {
    ASSIGN_OR_RETURN(int64_t output_sequence, info.attrs().GetInt("output_sequence"));
    (void)output_sequence;  // opset 1's hint; the Y output is computed whenever it is read
  }
  const int per_direction = kind == RnnKind::kRnn ? 1 : kind == RnnKind::kGru ? 2 : 3;
  const std::vector<std::string> defaults = kind == RnnKind::kRnn   ? std::vector<std::string>{"Tanh"}
                                            : kind == RnnKind::kGru ? std::vector<std::string>{"Sigmoid", "Tanh"}
                                                                    : std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"};
  ASSIGN_OR_RETURN(a.activations, ReadRnnActivations(label, info.attrs(), per_direction, a.directions, defaults));
  const int max_outputs = kind == RnnKind::kLstm ? 3 : 2;
  if (info.num_outputs > max_outputs)
    return absl::InvalidArgumentError(absl::StrCat(label, ": has ", info.num_outputs, " outputs; at most ", max_outputs));
  return std::make_unique<RnnLayerKernel>(std::move(label), std::move(a));
}

}  // namespace attune

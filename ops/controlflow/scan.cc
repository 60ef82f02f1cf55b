// Scan (opset 9 on): N state values carried through the body and M scan
// inputs sliced along their scan axes, forward or in reverse; the body's K
// scan outputs are stacked along their own axes, in either direction.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"
#include "ops/controlflow/kernels.h"
#include "ops/controlflow/subgraph_call.h"

namespace attune {
namespace {

using controlflow::SubgraphCall;

struct ScanLayout {
  int states = 0;
  std::vector<int64_t> input_axes, input_reverse, output_axes, output_reverse;
};

class ScanKernel final : public Kernel {
 public:
  ScanKernel(SubgraphCall body, ScanLayout layout) : body_(std::move(body)), layout_(std::move(layout)) {}

  absl::Status Run(KernelContext& ctx) const override {
    const int states = layout_.states, scan_inputs = static_cast<int>(layout_.input_axes.size());
    const int64_t max_bytes = ctx.options().max_tensor_bytes;
    std::vector<Tensor> carried;
    for (int i = 0; i < states + scan_inputs; ++i)
      if (ctx.input(i) == nullptr) return absl::InvalidArgumentError(absl::StrCat("input ", i, " is omitted"));
    for (int i = 0; i < states; ++i) carried.push_back(*ctx.input(i));
    std::vector<int64_t> axes;
    int64_t length = -1;
    for (int j = 0; j < scan_inputs; ++j) {
      const Tensor& in = *ctx.input(states + j);
      const int64_t axis = layout_.input_axes[j] < 0 ? layout_.input_axes[j] + in.rank() : layout_.input_axes[j];
      if (axis < 0 || axis >= in.rank())
        return absl::InvalidArgumentError(absl::StrCat("scan_input_axes[", j, "] = ", layout_.input_axes[j],
                                                       " is out of range for scan input ", j, " ", in.DebugString()));
      if (length >= 0 && in.shape()[axis] != length)
        return absl::InvalidArgumentError(absl::StrCat("scan input ", j, " ", in.DebugString(), " has ",
                                                       in.shape()[axis], " steps along axis ", axis,
                                                       "; the scan inputs before it have ", length));
      length = in.shape()[axis];
      axes.push_back(axis);
    }
    if (length > ctx.options().max_loop_iterations)
      return absl::ResourceExhaustedError(absl::StrCat("the scan has ", length,
                                                       " steps, above the session's limit (max_loop_iterations)"));
    const int scans = body_.num_outputs() - states;
    std::vector<std::vector<Tensor>> parts(scans);
    std::vector<int64_t> part_bytes(scans, 0);
    for (int64_t t = 0; t < length; ++t) {
      std::vector<Tensor> feeds = std::move(carried);
      for (int j = 0; j < scan_inputs; ++j) {
        const int64_t step = layout_.input_reverse[j] ? length - 1 - t : t;
        ASSIGN_OR_RETURN(Tensor slice, controlflow::SliceAlongAxis(*ctx.input(states + j), axes[j], step, max_bytes));
        feeds.push_back(std::move(slice));
      }
      ASSIGN_OR_RETURN(std::vector<Tensor> out, body_.Run(std::move(feeds), ctx));
      carried.assign(out.begin(), out.begin() + states);
      for (int k = 0; k < scans; ++k) {
        RETURN_IF_ERROR(controlflow::CheckScanPart(parts[k], out[states + k], absl::StrCat("scan output ", k),
                                                  part_bytes[k], max_bytes));
        parts[k].push_back(std::move(out[states + k]));
      }
    }
    for (int i = 0; i < states; ++i) ctx.SetOutput(i, std::move(carried[i]));
    for (int k = 0; k < scans; ++k) {
      if (!ctx.output_wanted(states + k)) continue;
      const int64_t rank = parts[k].empty() ? 1 : parts[k][0].rank() + 1;
      const int64_t axis = layout_.output_axes[k] < 0 ? layout_.output_axes[k] + rank : layout_.output_axes[k];
      if (axis < 0 || axis >= rank)
        return absl::InvalidArgumentError(absl::StrCat("scan_output_axes[", k, "] = ", layout_.output_axes[k],
                                                       " is out of range for a stacked output of rank ", rank));
      const ElementType type = body_.output_type(states + k);
      ASSIGN_OR_RETURN(Tensor stacked,
                       controlflow::StackAlongAxis(parts[k], axis, layout_.output_reverse[k] != 0,
                                                   type == ElementType::kUndefined ? ElementType::kFloat32 : type,
                                                   {}, max_bytes));
      ctx.SetOutput(states + k, std::move(stacked));
    }
    return absl::OkStatus();
  }

 private:
  SubgraphCall body_;
  ScanLayout layout_;
};

// A per-input or per-output attribute list: its length checked, zeros by default.
absl::StatusOr<std::vector<int64_t>> PerScanList(const KernelInfo& info, const char* name, int64_t count) {
  ASSIGN_OR_RETURN(std::vector<int64_t> list, info.attrs().GetInts(name, std::vector<int64_t>(count, 0)));
  if (static_cast<int64_t>(list.size()) != count)
    return absl::InvalidArgumentError(
        absl::StrCat("attribute '", name, "' has ", list.size(), " entries; the node has ", count));
  return list;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Kernel>> MakeScanKernel(const KernelInfo& info) {
  ASSIGN_OR_RETURN(int own, SubgraphCall::OwnInputs(info, "body"));
  ASSIGN_OR_RETURN(int64_t scan_inputs, info.attrs().GetInt("num_scan_inputs"));
  if (scan_inputs < 1 || scan_inputs > own)
    return absl::InvalidArgumentError(absl::StrCat("num_scan_inputs = ", scan_inputs, " must be 1 to the node's ",
                                                   own, " inputs"));
  ScanLayout layout;
  layout.states = own - static_cast<int>(scan_inputs);
  if (info.num_outputs < layout.states)
    return absl::InvalidArgumentError(absl::StrCat("the node has ", info.num_outputs, " outputs, fewer than its ",
                                                   layout.states, " state values"));
  const int64_t scan_outputs = info.num_outputs - layout.states;
  ASSIGN_OR_RETURN(layout.input_axes, PerScanList(info, "scan_input_axes", scan_inputs));
  ASSIGN_OR_RETURN(layout.input_reverse, PerScanList(info, "scan_input_directions", scan_inputs));
  ASSIGN_OR_RETURN(layout.output_axes, PerScanList(info, "scan_output_axes", scan_outputs));
  ASSIGN_OR_RETURN(layout.output_reverse, PerScanList(info, "scan_output_directions", scan_outputs));
  ASSIGN_OR_RETURN(SubgraphCall body, SubgraphCall::Prepare(info, "body", own, info.num_outputs));
  return std::make_unique<ScanKernel>(std::move(body), std::move(layout));
}

}  // namespace attune

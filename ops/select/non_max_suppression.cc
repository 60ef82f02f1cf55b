// NonMaxSuppression (opsets 10, 11): per batch and class, boxes in
// descending score order (equal scores: lower index first) are kept unless
// their IoU with a box already kept exceeds iou_threshold; boxes whose score
// is not above score_threshold (when given) are never candidates, and at
// most max_output_boxes_per_class are kept (0 or omitted: none). Boxes are
// [y1, x1, y2, x2] with the corners in either order (center_point_box 0) or
// [x_center, y_center, width, height] (1). The IoU is computed in float, as
// ONNX's reference and ONNX Runtime do, so boundary cases agree.
// Output: selected_indices [n, 3] int64 of (batch, class, box).
#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"
#include "core/common/strings.h"
#include "ops/common/node_label.h"
#include "ops/select/kernels.h"

namespace attune {
namespace {

struct Corners {
  float x_min, x_max, y_min, y_max;
};

Corners ToCorners(const float* b, bool center) {
  if (center) return {b[0] - b[2] / 2, b[0] + b[2] / 2, b[1] - b[3] / 2, b[1] + b[3] / 2};
  return {std::min(b[1], b[3]), std::max(b[1], b[3]), std::min(b[0], b[2]), std::max(b[0], b[2])};
}

bool Suppresses(const Corners& a, const Corners& b, float iou_threshold) {
  const float ix_min = std::max(a.x_min, b.x_min), ix_max = std::min(a.x_max, b.x_max);
  if (ix_max <= ix_min) return false;
  const float iy_min = std::max(a.y_min, b.y_min), iy_max = std::min(a.y_max, b.y_max);
  if (iy_max <= iy_min) return false;
  const float inter = (ix_max - ix_min) * (iy_max - iy_min);
  const float area_a = (a.x_max - a.x_min) * (a.y_max - a.y_min), area_b = (b.x_max - b.x_min) * (b.y_max - b.y_min);
  const float uni = area_a + area_b - inter;
  if (inter <= 0 || area_a <= 0 || area_b <= 0 || uni <= 0) return false;
  return inter / uni > iou_threshold;
}

class NonMaxSuppressionKernel final : public Kernel {
 public:
  NonMaxSuppressionKernel(std::string label, bool center) : label_(std::move(label)), center_(center) {}

  absl::Status Run(KernelContext& ctx) const override {
    const Tensor* boxes = ctx.input(0);
    const Tensor* scores = ctx.input(1);
    if (boxes == nullptr || scores == nullptr)
      return absl::InvalidArgumentError(absl::StrCat(label_, ": needs boxes and scores"));
    const std::vector<int64_t>& bs = boxes->shape();
    const std::vector<int64_t>& ss = scores->shape();
    if (boxes->type() != ElementType::kFloat32 || scores->type() != ElementType::kFloat32 || bs.size() != 3 ||
        bs[2] != 4 || ss.size() != 3 || ss[0] != bs[0] || ss[2] != bs[1])
      return absl::InvalidArgumentError(absl::StrCat(label_, ": boxes ", ShapeToString(bs), " and scores ",
                                                     ShapeToString(ss), " must be float32 [batches, boxes, 4] and ",
                                                     "[batches, classes, boxes]"));
    int64_t max_boxes = 0;
    if (const Tensor* m = ctx.input(2); m != nullptr && m->num_elements() > 0) {
      if (m->type() != ElementType::kInt64 || m->num_elements() != 1)
        return absl::InvalidArgumentError(absl::StrCat(label_, ": max_output_boxes_per_class must be one int64"));
      max_boxes = std::max<int64_t>(m->data<int64_t>()[0], 0);
    }
    ASSIGN_OR_RETURN(const float iou_threshold, Threshold(ctx.input(3), "iou_threshold", 0.0f));
    const bool has_score_threshold = ctx.input(4) != nullptr && ctx.input(4)->num_elements() > 0;
    ASSIGN_OR_RETURN(const float score_threshold, Threshold(ctx.input(4), "score_threshold", 0.0f));
    if (iou_threshold < 0 || iou_threshold > 1)
      return absl::InvalidArgumentError(absl::StrCat(label_, ": iou_threshold is ", iou_threshold, "; it must be in [0, 1]"));
    const int64_t batches = bs[0], n = bs[1], classes = ss[1];
    std::vector<int64_t> selected;  // flat (batch, class, box) triples
    std::vector<int64_t> order;
    std::vector<Corners> kept;
    for (int64_t b = 0; b < batches; ++b) {
      const float* bp = boxes->data<float>() + b * n * 4;
      for (int64_t c = 0; c < classes; ++c) {
        const float* sp = scores->data<float>() + (b * classes + c) * n;
        order.clear();
        for (int64_t i = 0; i < n; ++i)
          if (!has_score_threshold || sp[i] > score_threshold) order.push_back(i);
        std::stable_sort(order.begin(), order.end(), [&](int64_t x, int64_t y) { return sp[x] > sp[y]; });
        kept.clear();
        for (int64_t i : order) {
          if (static_cast<int64_t>(kept.size()) >= max_boxes) break;
          const Corners box = ToCorners(bp + i * 4, center_);
          if (std::any_of(kept.begin(), kept.end(), [&](const Corners& k) { return Suppresses(box, k, iou_threshold); }))
            continue;
          kept.push_back(box);
          selected.insert(selected.end(), {b, c, i});
        }
      }
    }
    ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutputForOverwrite(0, ElementType::kInt64,
                                                                 {static_cast<int64_t>(selected.size() / 3), 3}));
    std::copy(selected.begin(), selected.end(), y->data<int64_t>());
    return absl::OkStatus();
  }

 private:
  absl::StatusOr<float> Threshold(const Tensor* t, const char* name, float fallback) const {
    if (t == nullptr || t->num_elements() == 0) return fallback;
    if (t->type() != ElementType::kFloat32 || t->num_elements() != 1)
      return absl::InvalidArgumentError(absl::StrCat(label_, ": ", name, " must be one float32"));
    const float v = t->data<float>()[0];
    if (std::isnan(v)) return absl::InvalidArgumentError(absl::StrCat(label_, ": ", name, " is NaN"));
    return v;
  }

  std::string label_;
  bool center_;
};

}  // namespace

SelectKernelOr MakeNonMaxSuppressionKernel(const KernelInfo& info) {
  std::string label = NodeLabel(info);
  if (info.num_inputs() < 2 || !info.input_present[0] || !info.input_present[1])
    return absl::InvalidArgumentError(absl::StrCat(label, ": needs boxes and scores"));
  ASSIGN_OR_RETURN(int64_t center, info.attrs().GetInt("center_point_box", 0));
  if (center != 0 && center != 1)
    return absl::InvalidArgumentError(absl::StrCat(label, ": attribute 'center_point_box' is ", center,
                                                   "; expected 0 or 1"));
  return std::make_unique<NonMaxSuppressionKernel>(std::move(label), center == 1);
}

}  // namespace attune

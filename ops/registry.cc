#include "ops/registry.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "core/common/escape.h"
#include "core/common/strings.h"
#include "ops/register_all.h"

namespace attune {

std::string_view CanonicalDomain(std::string_view domain) {
  return domain == "ai.onnx" ? std::string_view() : domain;
}

void KernelRegistry::Register(std::string_view domain, std::string_view op_type, int since_version,
                              int until_version, KernelFactory factory) {
  domain = CanonicalDomain(domain);
  entries_[absl::StrCat(Sv(domain), "::", Sv(op_type))].push_back(
      Entry{std::string(domain), std::string(op_type), since_version, until_version, std::move(factory)});
}

absl::StatusOr<const KernelRegistry::Entry*> KernelRegistry::Find(std::string_view domain, std::string_view op_type,
                                                                  int opset) const {
  domain = CanonicalDomain(domain);
  auto it = entries_.find(absl::StrCat(Sv(domain), "::", Sv(op_type)));
  const std::string shown_domain = domain.empty() ? "ai.onnx" : EscapeControl(domain);
  if (it == entries_.end())
    return absl::UnimplementedError(
        absl::StrCat("unsupported op ", EscapeControl(op_type), " (domain ", shown_domain, ", opset ", opset, ")"));
  for (const Entry& e : it->second)
    if (opset >= e.since_version && opset <= e.until_version) return &e;
  return absl::UnimplementedError(absl::StrCat("op ", EscapeControl(op_type), " (domain ", shown_domain,
                                               ") is not supported at opset ", opset));
}

std::vector<const KernelRegistry::Entry*> KernelRegistry::Entries() const {
  std::vector<const Entry*> out;
  for (const auto& [key, list] : entries_)
    for (const Entry& e : list) out.push_back(&e);
  std::sort(out.begin(), out.end(), [](const Entry* a, const Entry* b) {
    return std::tie(a->domain, a->op_type, a->since_version) < std::tie(b->domain, b->op_type, b->since_version);
  });
  return out;
}

const KernelRegistry& DefaultKernelRegistry() {
  static const KernelRegistry* registry = [] {
    auto* r = new KernelRegistry();
    RegisterAllKernels(*r);
    return r;
  }();
  return *registry;
}

}  // namespace attune

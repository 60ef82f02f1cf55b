// The kernel registry: (domain, op type, opset range) -> kernel factory.
#pragma once

#include <climits>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "ops/kernel.h"

namespace attune {

/// Domain names as the registry keys them: "ai.onnx" is stored as "".
std::string_view CanonicalDomain(std::string_view domain);

class KernelRegistry {
 public:
  struct Entry {
    std::string domain;
    std::string op_type;
    int since_version;  // first opset this kernel implements
    int until_version;  // last opset (inclusive)
    KernelFactory factory;
  };

  /// Registers a kernel for opsets [since_version, until_version].
  void Register(std::string_view domain, std::string_view op_type, int since_version, int until_version,
                KernelFactory factory);
  /// Same, for every opset from since_version on.
  void Register(std::string_view domain, std::string_view op_type, int since_version, KernelFactory factory) {
    Register(domain, op_type, since_version, INT_MAX, std::move(factory));
  }

  /// The entry for the op at that opset; Unimplemented naming op, domain and opset otherwise.
  absl::StatusOr<const Entry*> Find(std::string_view domain, std::string_view op_type, int opset) const;
  bool Supports(std::string_view domain, std::string_view op_type, int opset) const {
    return Find(domain, op_type, opset).ok();
  }
  /// All entries, sorted by domain, op type and opset. Only tests call it:
  /// they check every kernel against the arity table (which skips an op it
  /// lacks, so nothing else notices one missing) and against ONNX's schemas.
  std::vector<const Entry*> Entries() const;

 private:
  absl::flat_hash_map<std::string, std::vector<Entry>> entries_;  // key: domain + "::" + op
};

/// The registry with every kernel Attune has, built once.
const KernelRegistry& DefaultKernelRegistry();

}  // namespace attune

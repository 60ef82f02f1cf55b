// A released constant whose bytes stay where the model file holds them, in
// its mapping, at any alignment (raw data inside a protobuf is wherever the
// serialiser put it, and a tensor needs data aligned to its type, so such a
// weight used to be copied at import). Left in place, it is read by what
// reads bytes (an embedding Gather copies rows; weight compression quantizes
// from it and then gives the pages back), and only the pages those touch
// become resident. Anything else gets an aligned copy from Restore (the plan
// makes one for a kernel that does not hold the constant).
#pragma once

#include <cstdint>
#include <vector>

#include "core/ir/constant_holder.h"

namespace attune {

class FileConstant : public ConstantHolder {
 public:
  virtual ElementType type() const = 0;
  virtual const std::vector<int64_t>& shape() const = 0;
  /// The constant's bytes, row-major, at any alignment: read them with memcpy.
  virtual const char* bytes() const = 0;
  virtual int64_t byte_size() const = 0;
  /// Gives the pages wholly inside bytes [offset, offset + size) back to the
  /// system; a later read brings them back from the file.
  virtual void DropPages(int64_t offset, int64_t size) const = 0;
  void DropPages() const { DropPages(0, byte_size()); }
};

}  // namespace attune
